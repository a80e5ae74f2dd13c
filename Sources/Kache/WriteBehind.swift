import DequeModule
import Dispatch
import Foundation

/// The background writer of `async` durability: a queue of file writes and
/// deletions, drained by one thread.
///
/// Callers return as soon as their job is queued. When the queued bytes pass
/// `limit`, the caller runs queued jobs itself until they are back under it
/// (so a burst is absorbed, and a sustained load runs at the disk's pace on
/// two threads instead of growing memory without bound). Jobs may run in any
/// order on either thread: `Persister` makes every job check, under its name's
/// stripe, that it is still current.
final class WriteBehind: Sendable {
    private struct Queue: Sendable {
        var jobs = Deque<Persister.Job>()
        var bytes = 0
        var inFlight = 0
        var stopping = false
    }

    private let queue = Locked(Queue())
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let persister: Persister
    private let limit: Int

    init(persister: Persister, limit: Int) {
        self.persister = persister
        self.limit = limit
        let thread = Thread { [self] in self.run() }
        thread.name = "kache.write-behind"
        thread.start()
    }

    /// Queues `jobs`; when the queue holds more than the limit, helps drain it.
    func enqueue(_ jobs: [Persister.Job]) {
        guard !jobs.isEmpty else { return }
        let over = queue.withLock { queue in
            for job in jobs {
                queue.jobs.append(job)
                queue.bytes += job.byteCount
            }
            return queue.bytes > limit
        }
        for _ in jobs { wakeup.signal() }
        if over {
            while let job = take(whileOverLimit: true) { run(job) }
        }
    }

    /// Runs every queued job and waits for the ones in flight: afterwards every
    /// write queued before the call is in its file.
    func drain() {
        while let job = take(whileOverLimit: false) { run(job) }
        while queue.withLock({ $0.inFlight > 0 }) { usleep(100) }
    }

    /// Drains the queue and stops the thread.
    func stop() {
        drain()
        let wasRunning = queue.withLock { queue in
            defer { queue.stopping = true }
            return !queue.stopping
        }
        guard wasRunning else { return }
        wakeup.signal()
        finished.wait()
    }

    /// Whether no job is queued or running.
    var isIdle: Bool { queue.withLock { $0.jobs.isEmpty && $0.inFlight == 0 } }

    /// Jobs waiting to run.
    var pendingCount: Int { queue.withLock { $0.jobs.count } }

    private func take(whileOverLimit: Bool) -> Persister.Job? {
        queue.withLock { queue in
            guard !whileOverLimit || queue.bytes > limit, let job = queue.jobs.popFirst() else { return nil }
            queue.bytes -= job.byteCount
            queue.inFlight += 1
            return job
        }
    }

    private func run(_ job: Persister.Job) {
        persister.perform(job)
        queue.withLock { $0.inFlight -= 1 }
    }

    private func run() {
        while true {
            wakeup.wait()
            if let job = take(whileOverLimit: false) {
                run(job)
            } else if queue.withLock({ $0.stopping && $0.jobs.isEmpty }) {
                finished.signal()
                return
            }
        }
    }
}
