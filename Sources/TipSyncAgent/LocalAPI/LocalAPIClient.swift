import Foundation

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
    private let systemConnect = Glibc.connect
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
    private let systemConnect = Darwin.connect
#endif

/// A minimal blocking client for the local API (what the CLI, tests and benchmarks use; any
/// language's Unix-socket support does the same): connect, write a JSON line, read lines.
public final class LocalAPIClient {
    let descriptor: Int32
    var pending: [UInt8] = []

    /// Connects to the socket at `path`.
    public init(path: String) throws {
        descriptor = socket(AF_UNIX, streamSocket, 0)
        guard descriptor >= 0 else { throw AgentError(.socket, message: "socket() failed: errno \(errno)") }
        // No close(2) on failure: deinit runs when a class's init throws after `descriptor` is set,
        // and closing twice would close whatever file reused the number meanwhile.
        guard Self.connect(descriptor, path) else {
            throw AgentError(.notRunning, message: "no agent is listening on \(path)")
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    static func connect(_ descriptor: Int32, _ path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Whether an agent answers on `path`.
    public static func isListening(_ path: String) -> Bool {
        (try? LocalAPIClient(path: path)) != nil
    }

    /// Sends one request line and returns the response line.
    public func request(_ json: String) throws -> String {
        try send(json)
        guard let line = try readLine() else {
            throw AgentError(.closed, message: "the agent closed the connection")
        }
        return line
    }

    /// Sends one request line.
    public func send(_ json: String) throws {
        let bytes = Array((json + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw AgentError(.closed, message: "write failed: errno \(errno)") }
            offset += written
        }
    }

    /// The next line from the agent; `nil` when it closed the connection.
    public func readLine() throws -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { throw AgentError(.closed, message: "read failed: errno \(errno)") }
            if count == 0 { return nil }
            pending.append(contentsOf: buffer[..<count])
        }
    }
}
