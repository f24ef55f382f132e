import NIOCore

/// A connection handler's deadline timer that is never cancelled. NIO removes a cancelled
/// scheduled task by scanning every task scheduled on its event loop, under the lock every other
/// thread's `execute` takes: with a timer per connection, 18,000 devices reconnecting at once made
/// each cancel scan thousands of timers (6% of a restarted server's CPU in a reconnect storm, and
/// waits on that lock). Instead a timer that is no longer wanted is forgotten: it fires at its time
/// and finds nothing to do, and it holds its handler and context only weakly, so a connection that
/// closed is not kept for the rest of the deadline.
struct ConnectionTimer<Handler: AnyObject> {
    /// Bumped whenever the timer is forgotten or replaced: only the latest one acts when it fires.
    private(set) var generation = 0
    /// Whether a timer is pending (set and not forgotten).
    private(set) var isSet = false

    /// Sets a timer for `deadline`, forgetting any earlier one. When it fires, `fire` runs with the
    /// handler, its context and the timer's generation, if both are still alive; the handler asks
    /// ``fired(_:)`` whether it is the latest timer before it acts.
    mutating func set(
        at deadline: NIODeadline, handler: Handler, context: ChannelHandlerContext,
        fire: @escaping (Handler, ChannelHandlerContext, _ generation: Int) -> Void
    ) {
        generation &+= 1
        isSet = true
        let target = NIOLoopBound(
            Target(handler: handler, context: context, fire: fire), eventLoop: context.eventLoop)
        let generation = generation
        context.eventLoop.scheduleTask(deadline: deadline) {
            let target = target.value
            guard let handler = target.handler, let context = target.context else { return }
            target.fire(handler, context, generation)
        }
    }

    /// Whether the timer that fired (`generation`, as it was when set) is the latest one.
    mutating func fired(_ generation: Int) -> Bool {
        guard generation == self.generation, isSet else { return false }
        isSet = false
        return true
    }

    /// No timer is wanted any more: a pending one finds nothing to do when it fires.
    mutating func forget() {
        generation &+= 1
        isSet = false
    }

    private final class Target {
        weak var handler: Handler?
        weak var context: ChannelHandlerContext?
        let fire: (Handler, ChannelHandlerContext, Int) -> Void

        init(
            handler: Handler, context: ChannelHandlerContext,
            fire: @escaping (Handler, ChannelHandlerContext, Int) -> Void
        ) {
            self.handler = handler
            self.context = context
            self.fire = fire
        }
    }
}
