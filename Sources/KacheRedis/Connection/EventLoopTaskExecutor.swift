import NIOCore

/// One event loop as a Swift `TaskExecutor`: a task that prefers it runs its
/// nonisolated code on the loop's thread
/// (``RedisClusterClient/withEventLoopAffinity(isolation:_:)``).
///
/// Such a task, sending on a connection of the same loop, writes its command
/// itself, and the handler's resuming it from `channelRead` only queues it on
/// the loop it is already on: a round trip wakes no thread but the server's.
///
/// Why our own: swift-nio (2.101) makes an event loop a `SerialExecutor`,
/// for actors, but offers no `TaskExecutor` for one.
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // From the loop itself (a reply resuming its task) this queues the job
        // for the loop's next pass, without waking anything.
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
