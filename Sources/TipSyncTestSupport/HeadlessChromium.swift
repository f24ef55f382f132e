import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Headless Chromium driven through the DevTools protocol over `--remote-debugging-pipe` (JSON
/// messages separated by NUL bytes on descriptors 3 and 4): no WebSocket client, no driver binary.
/// One page; navigation waits for the page's load event, not for time to pass.
public final class HeadlessChromium: Sendable {
    public let process: ChildProcess
    private let toBrowser: Int32
    private let state = Mutex(State())
    private let session = Mutex<String?>(nil)
    private let profile: String

    private struct State {
        var nextID = 1
        var replies: [Int: CheckedContinuation<[String: Any], any Error>] = [:]
        var eventWaiters: [(method: String, session: String?, continuation: CheckedContinuation<Void, any Error>)] = []
        var ended = false
    }

    public static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// A second page of the same browser (the same profile: another tab of one device).
    public struct Tab: Sendable {
        let session: String
    }

    public init(width: Int = 1280, height: Int = 900) async throws {
        guard let executable = Self.executable else {
            throw ChildProcessError(description: "chromium is not installed (apt-get install -y chromium)")
        }
        let commands = try ChildProcess.pipe()
        let replies = try ChildProcess.pipe()
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("tipsync-chromium-\(UUID())").path
        process = try ChildProcess(
            executable,
            [
                "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-dev-shm-usage", "--user-data-dir=\(profile)", "--window-size=\(width),\(height)",
                // No component downloads into the profile (they outlive `quit()` in helper processes).
                "--disable-component-update", "--disable-background-networking",
                "about:blank",
            ], descriptors: [3: commands.read, 4: replies.write])
        close(commands.read)
        close(replies.write)
        toBrowser = commands.write
        let fromBrowser = replies.read
        Thread.detachNewThread { [self] in readMessages(fromBrowser) }
        // Attach to the page the browser opened.
        let targets = try await send("Target.getTargets", session: nil)
        let infos = (targets["targetInfos"] as? [[String: Any]]) ?? []
        guard let page = infos.first(where: { $0["type"] as? String == "page" })?["targetId"] as? String else {
            throw ChildProcessError(description: "chromium opened no page")
        }
        let attached = try await send("Target.attachToTarget", ["targetId": page, "flatten": true], session: nil)
        session.withLock { $0 = attached["sessionId"] as? String }
        _ = try await send("Page.enable")
        _ = try await send("Runtime.enable")
    }

    deinit {
        close(toBrowser)
        process.terminate()
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// Ends the browser, waits for it, and removes its profile.
    public func quit() async {
        _ = try? await send("Browser.close", session: nil)
        process.terminate()
        await process.exitStatus()
        Scratch.remove(atPath: profile)
    }

    /// Loads `url` (in the first page, or `tab`) and waits for its load event.
    public func open(_ url: String, in tab: Tab? = nil) async throws {
        let session = tab?.session ?? self.session.withLock { $0 }
        try await whileWaitingForLoad(session: session) {
            _ = try await self.send("Page.navigate", ["url": url], session: session)
        }
    }

    /// Reloads the page (or `tab`) and waits for its load event.
    public func reload(_ tab: Tab? = nil) async throws {
        let session = tab?.session ?? self.session.withLock { $0 }
        try await whileWaitingForLoad(session: session) {
            _ = try await self.send("Page.reload", [:], session: session)
        }
    }

    /// Opens another page of this browser (same profile) at `url` and waits for its load event.
    public func openTab(_ url: String) async throws -> Tab {
        let created = try await send("Target.createTarget", ["url": "about:blank"], session: nil)
        guard let target = created["targetId"] as? String else {
            throw ChildProcessError(description: "chromium opened no tab")
        }
        let attached = try await send("Target.attachToTarget", ["targetId": target, "flatten": true], session: nil)
        guard let session = attached["sessionId"] as? String else {
            throw ChildProcessError(description: "could not attach to the new tab")
        }
        _ = try await send("Page.enable", [:], session: session)
        _ = try await send("Runtime.enable", [:], session: session)
        let tab = Tab(session: session)
        try await open(url, in: tab)
        return tab
    }

    /// Takes the browser off the network (requests fail at once) or back on, as a device going offline.
    public func setOffline(_ offline: Bool, tab: Tab? = nil) async throws {
        let session = tab?.session ?? self.session.withLock { $0 }
        _ = try await send("Network.enable", [:], session: session)
        _ = try await send(
            "Network.emulateNetworkConditions",
            ["offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1], session: session)
    }

    /// Runs `script` in every page loaded from now on (in the first page, or `tab`), before the
    /// page's own scripts: to record what a page does from its very first moment.
    public func runBeforeEachPage(_ script: String, tab: Tab? = nil) async throws {
        let session = tab?.session ?? self.session.withLock { $0 }
        _ = try await send("Page.addScriptToEvaluateOnNewDocument", ["source": script], session: session)
    }

    /// Makes the page see the system's colour preference as `dark` (or `light`), as
    /// `prefers-color-scheme` tells it.
    public func emulateColorScheme(_ scheme: String, tab: Tab? = nil) async throws {
        let session = tab?.session ?? self.session.withLock { $0 }
        _ = try await send(
            "Emulation.setEmulatedMedia", ["features": [["name": "prefers-color-scheme", "value": scheme]]],
            session: session)
    }

    /// Runs `script` (which submits a form or follows a link) and waits for the next page's load event.
    public func runAndWaitForLoad(_ script: String) async throws {
        let session = self.session.withLock { $0 }
        try await whileWaitingForLoad(session: session) { _ = try await self.evaluate(script) }
    }

    /// The value of a JavaScript expression (strings, numbers, booleans; `nil` otherwise), in the first
    /// page or `tab`; with `awaitPromise`, the value the promise it gives resolves to.
    public func evaluate(_ expression: String, awaitPromise: Bool = false, in tab: Tab? = nil) async throws -> Any? {
        let session = tab?.session ?? self.session.withLock { $0 }
        let result = try await send(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": awaitPromise],
            session: session)
        if let exception = result["exceptionDetails"] {
            throw ChildProcessError(description: "script failed: \(exception)")
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// One node of the page's accessibility tree: what a screen reader is given.
    public struct AccessibleNode: Sendable, Equatable {
        public var role: String
        public var name: String
        public var description: String

        public init(role: String, name: String, description: String) {
            self.role = role
            self.name = name
            self.description = description
        }
    }

    /// The page's accessibility tree as Chromium hands it to screen readers (`Accessibility.getFullAXTree`),
    /// its ignored nodes left out.
    public func accessibilityTree() async throws -> [AccessibleNode] {
        let session = self.session.withLock { $0 }
        _ = try await send("Accessibility.enable", [:], session: session)
        let result = try await send("Accessibility.getFullAXTree", [:], session: session)
        func value(_ node: [String: Any], _ key: String) -> String {
            ((node[key] as? [String: Any])?["value"]).map { "\($0)" } ?? ""
        }
        return (result["nodes"] as? [[String: Any]] ?? []).compactMap { node in
            guard node["ignored"] as? Bool != true else { return nil }
            return AccessibleNode(
                role: value(node, "role"), name: value(node, "name"), description: value(node, "description"))
        }
    }

    public func text(_ selector: String) async throws -> String {
        let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [selector]), as: UTF8.self)
        return try await evaluate("(document.querySelector(\(quoted)[0]) || {innerText: ''}).innerText") as? String
            ?? ""
    }

    /// A PNG of the viewport, `width` CSS pixels wide (mobile emulation below 600).
    /// Presses a key as a person does (`Input.dispatchKeyEvent`: the page sees trusted keydown and
    /// keyup events, sent to whatever has focus): `Escape`, `Tab`, `Enter`, or one character.
    public func press(_ key: String, shift: Bool = false) async throws {
        let codes: [String: (code: String, keyCode: Int)] = [
            "Escape": ("Escape", 27), "Tab": ("Tab", 9), "Enter": ("Enter", 13),
        ]
        let known = codes[key]
        var event: [String: Any] = [
            "key": key, "code": known?.code ?? "Key\(key.uppercased())",
            "windowsVirtualKeyCode": known?.keyCode ?? Int(key.uppercased().unicodeScalars.first?.value ?? 0),
            "modifiers": shift ? 8 : 0,
        ]
        if known == nil || key == "Enter" { event["text"] = key == "Enter" ? "\r" : key }
        event["type"] = "keyDown"
        _ = try await send("Input.dispatchKeyEvent", event)
        event["type"] = "keyUp"
        event["text"] = nil
        _ = try await send("Input.dispatchKeyEvent", event)
    }

    public func screenshot(width: Int, height: Int, to path: String) async throws {
        _ = try await send(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600])
        let shot = try await send("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true])
        guard let data = (shot["data"] as? String).flatMap({ Data(base64Encoded: $0) }) else {
            throw ChildProcessError(description: "no screenshot data")
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The page's width as laid out against the viewport's: more means a horizontal scrollbar.
    public func overflowsHorizontally() async throws -> Bool {
        try await evaluate("document.documentElement.scrollWidth > window.innerWidth + 1") as? Bool ?? true
    }

    private func whileWaitingForLoad(session: String?, _ action: @escaping @Sendable () async throws -> Void)
        async throws
    {
        try await withThrowingTaskGroup(of: Void.self) { group in
            let registered = AsyncStream<Void>.makeStream()
            group.addTask {
                try await withCheckedThrowingContinuation { continuation in
                    let ended = self.state.withLock { state in
                        if state.ended { return true }
                        state.eventWaiters.append((method: "Page.loadEventFired", session: session, continuation))
                        return false
                    }
                    registered.continuation.yield()
                    if ended { continuation.resume(throwing: ChildProcessError(description: "chromium exited")) }
                }
            }
            for await _ in registered.stream { break }
            try await action()
            try await group.waitForAll()
        }
    }

    private func send(_ method: String, _ params: [String: Any] = [:], session useSession: Bool = true) async throws
        -> [String: Any]
    {
        try await send(method, params, session: useSession ? session.withLock { $0 } : nil)
    }

    private func send(_ method: String, _ params: [String: Any] = [:], session: String?) async throws -> [String: Any] {
        try await withCheckedThrowingContinuation { continuation in
            let id: Int? = state.withLock { state in
                guard !state.ended else { return nil }
                let id = state.nextID
                state.nextID += 1
                state.replies[id] = continuation
                return id
            }
            guard let id else {
                return continuation.resume(throwing: ChildProcessError(description: "chromium exited"))
            }
            var message: [String: Any] = ["id": id, "method": method, "params": params]
            if let session { message["sessionId"] = session }
            var bytes = Array((try? JSONSerialization.data(withJSONObject: message)) ?? Data())
            bytes.append(0)
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(toBrowser, $0.baseAddress, $0.count) }
                if written <= 0 { break }
                offset += written
            }
        }
    }

    private func readMessages(_ descriptor: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            pending += buffer[0..<count]
            while let end = pending.firstIndex(of: 0) {
                let message = Array(pending[..<end])
                pending.removeSubrange(...end)
                dispatch(message)
            }
        }
        close(descriptor)
        let (replies, waiters) = state.withLock { state in
            state.ended = true
            defer {
                state.replies = [:]
                state.eventWaiters = []
            }
            return (state.replies, state.eventWaiters)
        }
        for (_, reply) in replies { reply.resume(throwing: ChildProcessError(description: "chromium exited")) }
        for waiter in waiters {
            waiter.continuation.resume(throwing: ChildProcessError(description: "chromium exited"))
        }
    }

    private func dispatch(_ bytes: [UInt8]) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return }
        if let id = object["id"] as? Int {
            guard let reply = state.withLock({ $0.replies.removeValue(forKey: id) }) else { return }
            if let error = object["error"] {
                reply.resume(throwing: ChildProcessError(description: "DevTools error: \(error)"))
            } else {
                reply.resume(returning: object["result"] as? [String: Any] ?? [:])
            }
        } else if let method = object["method"] as? String {
            let session = object["sessionId"] as? String
            let waiters = state.withLock { state in
                let matches = {
                    (waiter: (method: String, session: String?, continuation: CheckedContinuation<Void, any Error>)) in
                    waiter.method == method && (waiter.session == nil || waiter.session == session)
                }
                let matching = state.eventWaiters.filter(matches)
                state.eventWaiters.removeAll(where: matches)
                return matching
            }
            for waiter in waiters { waiter.continuation.resume() }
        }
    }
}
