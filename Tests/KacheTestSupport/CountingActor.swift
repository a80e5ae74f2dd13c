import Dispatch
import Synchronization

/// An actor whose executor counts the jobs it is given, for tests of where a
/// call runs. A task that leaves the actor (for the global executor, an I/O
/// thread) and comes back is one job more; a call answered on the actor
/// itself adds none.
///
/// ```swift
/// let (value, jobs) = await CountingActor().count { _ in await cache.data(forKey: "k") }
/// #expect(jobs == 0)
/// ```
public actor CountingActor {
    private let executor = CountingExecutor()

    public init() {}

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Runs `body` on the actor: what it returns, and the jobs the actor's executor was given meanwhile.
    public func count<T: Sendable>(_ body: @Sendable (isolated CountingActor) async -> T) async -> (result: T, jobs: Int) {
        let before = executor.jobs.load(ordering: .relaxed)
        let result = await body(self)
        return (result, executor.jobs.load(ordering: .relaxed) - before)
    }
}

/// A serial executor on a dispatch queue that counts what it runs.
private final class CountingExecutor: SerialExecutor {
    let jobs = Atomic<Int>(0)
    private let queue = DispatchQueue(label: "kache.tests.counting-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
