import CKacheSystem
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
/// order on either thread: `RecordFiles` makes every job check, under its name's
/// stripe, that it is still current.
package final class WriteBehind: Sendable {
    package struct Queue: Sendable {
        /// The memory the queued jobs hold, as the memory budget counts it,
        /// until they are written (a batch taken is still in memory).
        package let held: QueuedBytes
        package private(set) var jobs = Deque<RecordFiles.Job>()
        package private(set) var bytes = 0
        /// The most jobs queued at once since `jobs` last had fresh storage.
        package private(set) var highWater = 0
        /// Jobs taken by a thread and not finished yet.
        var inFlight = 0
        var stopping = false
        /// Set by `abandon()`: jobs are dropped, never queued or run again.
        private(set) var isAbandoned = false
        /// The writer found nothing to do and waits on `wakeup`: only then does
        /// an enqueue signal it (a signal per job cost a futex call per set).
        var writerAsleep = false
        /// The first write lost since `takeLostWrite()` last ran: its `set`
        /// had returned, so only the next `save()` can report it.
        var lostWrite: StorageError?

        /// A deque keeps the storage it grew to (about 120 bytes a job): after
        /// a burst of 100,000 writes that is 12 MB held for good. Once a queue
        /// that grew past this many jobs is empty, it starts over.
        package static let jobsKept = 4_096

        package init(held: QueuedBytes) {
            self.held = held
        }

        package mutating func append(_ job: RecordFiles.Job) {
            guard !isAbandoned else { return }
            jobs.append(job)
            bytes += job.byteCount
            held.add(QueuedBytes.held(by: job))
            highWater = max(highWater, jobs.count)
        }

        /// Takes the oldest jobs, up to `maximumBytes` of them (at least one).
        package mutating func takeBatch(maximumBytes: Int) -> [RecordFiles.Job] {
            var batch: [RecordFiles.Job] = []
            var taken = 0
            while taken < maximumBytes, let job = jobs.popFirst() {
                taken += job.byteCount
                batch.append(job)
            }
            bytes -= taken
            if jobs.isEmpty, highWater > Self.jobsKept {
                jobs = Deque()
                highWater = 0
            }
            return batch
        }

        /// Drops every queued job unrun and every job queued later, as a
        /// killed process loses them; what they held leaves the memory count.
        /// Batches taken already are not touched: they finish and release their own.
        package mutating func abandon() {
            isAbandoned = true
            held.add(-jobs.reduce(0) { $0 + QueuedBytes.held(by: $1) })
            jobs = Deque()
            bytes = 0
            highWater = 0
        }
    }

    private let queue: Locked<Queue>
    /// Holds the encoded files of queued writes.
    package let staging = StagingArea()
    /// Small records taken from the queue, waiting to fill their blocks.
    let gathered: GatheredBlocks
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let files: RecordFiles
    private let limit: Int
    /// Runs after each batch, on the thread that ran it (reclaiming segment space).
    private let afterBatch: @Sendable () -> Void

    /// `held` counts what the queue holds for the memory budget.
    init(files: RecordFiles, limit: Int, held: QueuedBytes, afterBatch: @escaping @Sendable () -> Void = {}) {
        queue = Locked(Queue(held: held))
        gathered = GatheredBlocks(held: held)
        self.files = files
        self.limit = limit
        self.afterBatch = afterBatch
        let thread = Thread { [self] in self.run() }
        thread.name = "kache.write-behind"
        thread.start()
    }

    /// Queues `jobs`; when the queue holds more than the limit, helps drain it.
    package func enqueue(_ jobs: [RecordFiles.Job]) {
        guard !jobs.isEmpty else { return }
        enqueue { queue in
            for job in jobs { queue.append(job) }
        }
    }

    /// Queues a set's write and the removals it made, with no array of jobs
    /// made for them (one allocation fewer per set).
    package func enqueue(_ write: consuming RecordWrite, removals: [RecordRemoval]) {
        let job = RecordFiles.Job.write(write)
        enqueue { queue in
            queue.append(job)
            for removal in removals { queue.append(.delete(removal)) }
        }
    }

    private func enqueue(_ append: (inout Queue) -> Void) {
        let (over, wakesWriter) = queue.withLock { queue in
            append(&queue)
            defer { queue.writerAsleep = false }
            return (queue.bytes > limit, queue.writerAsleep)
        }
        if wakesWriter { wakeup.signal() }
        if over {
            while let batch = take(whileOverLimit: true) { run(batch) }
        }
    }

    /// Runs every queued job and waits for the ones in flight: afterwards every
    /// write queued before the call is in its file.
    package func drain() {
        while let batch = take(whileOverLimit: false) { run(batch) }
        // A batch still in flight may hold records back for their blocks as it
        // ends: wait for it, then write every record held back.
        while queue.withLock({ $0.inFlight > 0 }) { usleep(100) }
        appendGathered(all: true)
        while queue.withLock({ $0.inFlight > 0 }) { usleep(100) }
    }

    /// Drains the queue and stops the thread.
    package func stop() {
        drain()
        let wasRunning = queue.withLock { queue in
            defer { queue.stopping = true }
            return !queue.stopping
        }
        guard wasRunning else { return }
        wakeup.signal()
        finished.wait()
    }

    /// Stops the way a killed process (SIGKILL) does, for tests that simulate
    /// one: the queued jobs are dropped without running, so their writes never
    /// reach a file and their removals never happen, and so is every job
    /// enqueued from now on. A batch a thread has taken already runs to its
    /// end (a kill would leave it half-written at worst, which recovery
    /// handles); then the thread stops. Unlike `stop()`, nothing is drained.
    package func abandon() {
        let wasRunning = queue.withLock { queue in
            queue.abandon()
            defer { queue.stopping = true }
            return !queue.stopping
        }
        while queue.withLock({ $0.inFlight > 0 }) { usleep(100) }
        gathered.abandon()
        guard wasRunning else { return }
        wakeup.signal()
        finished.wait()
    }

    /// The first write lost since the last call, once (as fsync(2) reports
    /// the writeback errors since the last sync); nil when none was.
    package func takeLostWrite() -> StorageError? {
        queue.withLock { queue in
            defer { queue.lostWrite = nil }
            return queue.lostWrite
        }
    }

    /// Whether no job is queued or running, and no record waits for its block.
    package var isIdle: Bool { queue.withLock { $0.jobs.isEmpty && $0.inFlight == 0 } && gathered.count == 0 }

    /// Whether the queue holds more than its limit: an enqueue now helps write.
    package var isOverLimit: Bool { queue.withLock { $0.bytes > limit } }

    /// Jobs waiting to run, and records waiting for their block.
    package var pendingCount: Int { queue.withLock { $0.jobs.count } + gathered.count }

    /// The most bytes of jobs one batch takes: small records go to disk in
    /// one write call per segment bucket, so a batch is what one write carries.
    static let batchBytes = 1 << 20

    /// Takes the oldest jobs, up to `batchBytes` of them (at least one).
    private func take(whileOverLimit: Bool) -> [RecordFiles.Job]? {
        queue.withLock { queue in
            guard !whileOverLimit || queue.bytes > limit, !queue.jobs.isEmpty else { return nil }
            let batch = queue.takeBatch(maximumBytes: WriteBehind.batchBytes)
            queue.inFlight += batch.count
            return batch
        }
    }

    private func run(_ batch: [RecordFiles.Job]) {
        let lost = files.perform(batch, gathering: gathered)
        queue.withLock { queue in
            if queue.lostWrite == nil { queue.lostWrite = lost }
            queue.inFlight -= batch.count
            queue.held.add(-batch.reduce(0) { $0 + QueuedBytes.held(by: $1) })
        }
    }

    /// Appends the records that waited long enough for their blocks (all of
    /// them when `all`), counted in flight meanwhile so that `drain()` waits for them.
    private func appendGathered(all: Bool) {
        queue.withLock { $0.inFlight += 1 }
        let lost = files.appendGathered(gathered, all: all)
        queue.withLock { queue in
            if queue.lostWrite == nil { queue.lostWrite = lost }
            queue.inFlight -= 1
        }
    }

    /// Bytes of jobs after which the writer, once the queue is empty, gives
    /// freed memory back: the queue's spent buffers are returned to the system.
    static let trimEvery = 16 << 20

    private func run() {
        var bytesSinceTrim = 0
        while true {
            if let deadline = gathered.nextDeadline, deadline <= .now {
                appendGathered(all: false)
            }
            if let batch = take(whileOverLimit: false) {
                bytesSinceTrim += batch.reduce(0) { $0 + $1.byteCount }
                run(batch)
                // Only here, on the writer's own thread: a caller helping to
                // drain may be inside a change, and reclaiming pauses changes.
                afterBatch()
                continue
            }
            let stops = queue.withLock { queue in
                // Checked under the lock an enqueue appends under, so a job
                // queued after `take` found none either is seen here or wakes us.
                guard queue.jobs.isEmpty else { return false }
                if queue.stopping { return true }
                queue.writerAsleep = true
                return false
            }
            if stops {
                // Nothing held back stays unwritten, unless the stop plays a kill (`abandon()`).
                if !queue.withLock(\.isAbandoned) { appendGathered(all: true) }
                finished.signal()
                return
            }
            if bytesSinceTrim >= Self.trimEvery {
                bytesSinceTrim = 0
                kache_return_freed_memory()
            }
            // An enqueue since then has signalled already: the wait returns at once.
            if let deadline = gathered.nextDeadline {
                let (seconds, attoseconds) = (deadline - .now).components
                let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                _ = wakeup.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
                // Not asleep any more, whether woken or timed out: the next enqueue needn't signal.
                queue.withLock { $0.writerAsleep = false }
            } else {
                wakeup.wait()
            }
        }
    }
}
