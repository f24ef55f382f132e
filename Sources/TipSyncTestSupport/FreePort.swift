import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP port on 127.0.0.1 that no one is listening on now, for a server a test starts.
///
/// Ports come from below the kernel's ephemeral range (32768 and up on Linux): a port the kernel
/// picked for `bind(0)` is also one it may hand to any outgoing connection a moment later (a client
/// of another test), which then makes the server's bind fail with "address already in use". Ports
/// below that range are never picked for outgoing connections; each is handed out once per process,
/// and only after a trial bind shows nobody listens there.
public enum FreePort {
    static let range = 20_000..<32_000
    static let cursor = Mutex(Int.random(in: FreePort.range))

    public static func next() -> Int {
        for _ in 0..<range.count {
            let port = cursor.withLock { cursor -> Int in
                defer { cursor = cursor + 1 >= range.upperBound ? range.lowerBound : cursor + 1 }
                return cursor
            }
            if isFree(port) { return port }
        }
        return Int.random(in: range)
    }

    static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 }
        }
    }
}
