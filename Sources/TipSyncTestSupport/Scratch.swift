public import Foundation

/// Where tests put their files: everything under one directory per test process,
/// `/tmp/tipsync-<pid>`, which is removed when the process exits: what tests put here is gone however
/// they end (a failed `#expect`, a thrown error, a test that forgot a `defer`).
///
/// The root is short on purpose: agents listen on Unix sockets inside these directories, and a
/// socket's path is limited to about 100 bytes.
public enum Scratch {
    private static let rootPath = "/tmp/tipsync-\(getpid())"

    /// Created on first use (a directory of an earlier process with the same pid is emptied first);
    /// its removal is registered with `atexit`, which runs when the test process ends normally.
    private static let root: URL = {
        try? FileManager.default.removeItem(atPath: rootPath)
        try? FileManager.default.createDirectory(atPath: rootPath, withIntermediateDirectories: true)
        atexit { Scratch.remove(atPath: Scratch.rootPath) }
        return URL(fileURLWithPath: rootPath, isDirectory: true)
    }()

    /// A path that does not exist yet, `<prefix>-<unique>[.<pathExtension>]`, for a file or a
    /// directory the caller (or a program it runs) creates.
    public static func path(_ prefix: String, pathExtension: String? = nil) -> URL {
        let name = "\(prefix)-\(UUID().uuidString.prefix(8))"
        return root.appendingPathComponent(pathExtension.map { "\(name).\($0)" } ?? name)
    }

    /// A new, empty directory `<prefix>-<unique>`.
    public static func directory(_ prefix: String) -> URL {
        let url = path(prefix)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Removes `path` and everything below it. A program a test started may still be writing there
    /// for a moment after it ended (Chromium's helper processes outlive its main one): this tries
    /// again every 10 ms, for at most a second, until the path is gone.
    public static func remove(atPath path: String) {
        for _ in 0..<100 {
            try? FileManager.default.removeItem(atPath: path)
            if !FileManager.default.fileExists(atPath: path) { return }
            usleep(10_000)
        }
    }
}
