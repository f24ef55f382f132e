public import Foundation

extension Process {
    /// Waits for the process to exit on a thread of its own. `waitUntilExit()` blocks its caller, and
    /// a test task blocking one of the few threads all test tasks share stalls the whole suite.
    public func exit() async {
        let process = UncheckedBox(self)
        _ = try? await offPool { process.value.waitUntilExit() }
    }
}

/// Runs blocking work (waiting for a process, a blocking read or syscall) on a thread of its own,
/// so it never holds one of the few threads every test task shares: on a 2-core machine the
/// cooperative pool has two, and two blocked test tasks would stall every in-process server.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// ``offPool(_:)`` for a non-Sendable object that the calling test does not touch meanwhile.
public func offPool<Object, T: Sendable>(using object: Object, _ body: @escaping (Object) throws -> T) async throws -> T
{
    let box = UncheckedBox((object, body))
    return try await offPool { try box.value.1(box.value.0) }
}

/// Carries a non-Sendable reference to a thread that is the only one using it meanwhile.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
