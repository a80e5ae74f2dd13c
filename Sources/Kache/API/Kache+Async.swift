import Foundation

// The `async` forms of the API. From an `async` context they are what a call
// finds first: Swift prefers the `async` overload there.
//
// What runs where: a read from memory, and a change that only touches memory
// (in `memory` durability, and in `async` while the write-behind queue is
// under its limit), run on the caller's own executor (these forms are
// `nonisolated(nonsending)`): from an actor, such as the main actor, with no
// hop to the global executor and back, which would cost more than the work.
// Anything that may read, write or sync a file runs on `IOThreadPool`, never
// on Swift concurrency's cooperative threads nor on the caller's actor.
//
// Cancellation: a read returns nil as soon as its task is cancelled (the file
// read it started finishes on the pool and only brings the value into
// memory). A change is never cut short: once begun it runs to its end, and
// the caller learns its outcome, so no entry or file is left half-changed.

extension Kache {
    /// Stores `data` under `key` until `ttl` from now, as ``set(_:forKey:ttl:)``,
    /// without blocking the calling task's thread on the disk.
    public nonisolated(nonsending) func set(_ data: Data, forKey key: String, ttl: Duration) async throws {
        try await change { try self.put(data, key: key, keySpace: .topLevel, ttl: ttl) }
    }

    /// Stores `data` under `key` until `ttl` after `now`, a reading of the
    /// configuration's clock the caller made: a tier beside this one that
    /// takes its expiry from the same reading ends at the same nanosecond.
    package nonisolated(nonsending) func set(_ data: Data, forKey key: String, ttl: Duration, now: Int64) async throws {
        try await change { try self.put(data, key: key, keySpace: .topLevel, ttl: ttl, now: now) }
    }

    /// Stores `data` under `key` for the configuration's `defaultTTL`.
    public nonisolated(nonsending) func set(_ data: Data, forKey key: String) async throws {
        try await set(data, forKey: key, ttl: configuration.defaultTTL)
    }

    /// The value stored under `key`, or nil, as ``data(forKey:)``; a value on
    /// disk is read on Kache's I/O threads. Nil at once if the task is cancelled.
    /// A value in memory is read on the caller's executor, with no hop.
    public nonisolated(nonsending) func data(forKey key: String) async -> Data? {
        await fetch(keySpace: .topLevel, key: key)
    }

    /// Removes the value stored under `key`, and its file.
    public nonisolated(nonsending) func removeValue(forKey key: String) async {
        await change { self.remove(key: key, keySpace: .topLevel) }
    }

    /// Removes every entry of every key space.
    public nonisolated(nonsending) func removeAll() async {
        await change { self.removeAll() }
    }

    /// Removes every entry whose time has passed, and their files.
    @discardableResult
    public nonisolated(nonsending) func sweep() async -> Int {
        await change { self.sweep() }
    }

    /// Makes everything set so far durable, as ``save()``, on Kache's I/O threads.
    public func save() async throws {
        try await fileWork { try self.save() }
    }

    /// Reloads the index from the directory, as ``load()``, on Kache's I/O threads.
    public func load() async throws {
        try await fileWork { try self.load() }
    }

    /// Flushes, writes the manifest and releases the directory, as ``close()``,
    /// on Kache's I/O threads.
    public func close() async throws {
        try await fileWork { try self.close() }
    }

    /// Stores `value` encoded as JSON, as the synchronous form does.
    public func set(_ value: some Encodable & Sendable, forKey key: String, ttl: Duration) async throws {
        try await change { try self.set(value, forKey: key, ttl: ttl) }
    }

    /// The value stored under `key`, decoded from JSON as `type`; nil when there is none.
    public func value<T: Decodable>(forKey key: String, as type: T.Type = T.self) async throws -> T? {
        guard let data = await data(forKey: key) else { return nil }
        return try Kache.decode(T.self, from: data, key: key)
    }

    // MARK: - Where the work runs

    /// Whether a change runs without waiting on the disk: nothing is written in
    /// `memory` durability, and in `async` a set only queues its file unless
    /// the queue is over its limit (the caller then helps write) or `load()`
    /// holds changes back.
    private var changesStayInMemory: Bool {
        guard let records else { return true }
        return !records.changesWaitForDisk && !records.disk.changesArePaused
    }

    /// Runs a change on the caller's thread when it stays in memory, else on
    /// the I/O pool, waiting for it to end even if the task is cancelled.
    nonisolated(nonsending) func change<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        if changesStayInMemory { return try body() }
        return try await IOThreadPool.shared.run(body)
    }

    /// Runs work that touches files on the I/O pool (inline when there are none).
    func fileWork<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        guard disk != nil else { return try body() }
        return try await IOThreadPool.shared.run(body)
    }

    /// The value of `key`: from memory on the caller's executor, from its file on the pool.
    @inline(__always)
    nonisolated(nonsending) func fetch(keySpace: KeySpace.Ref, key: String) async -> Data? {
        let started = latencies.start(.get)
        defer { if let started { latencies.finish(.get, since: started) } }
        let now = clock.nanosecondsSince1970()
        switch index.lookup(space: keySpace.number, key: key, now: now) {
        case let .hit(value): return value
        case .miss: return nil
        case .onDisk: break
        }
        guard !Task.isCancelled else { return nil }
        return await IOThreadPool.shared.read(whenCancelled: nil) { self.readValue(keySpace: keySpace, key: key) }
    }
}

extension Kache.Pool {
    /// Stores `data` under `key`, as ``set(_:forKey:ttl:)``, without blocking on the disk.
    public nonisolated(nonsending) func set(_ data: Data, forKey key: String, ttl: Duration) async throws {
        let (cache, keySpace) = (cache, keySpace)
        try await cache.change { try cache.put(data, key: key, keySpace: keySpace, ttl: ttl) }
    }

    /// Stores `data` under `key` for the configuration's `defaultTTL`.
    public nonisolated(nonsending) func set(_ data: Data, forKey key: String) async throws {
        try await set(data, forKey: key, ttl: cache.configuration.defaultTTL)
    }

    /// The value stored under `key` in this Pool, or nil; nil at once if the
    /// task is cancelled. A value in memory is read on the caller's executor.
    public nonisolated(nonsending) func data(forKey key: String) async -> Data? {
        await cache.fetch(keySpace: keySpace, key: key)
    }

    /// Removes `key` from this Pool, and its file.
    public nonisolated(nonsending) func removeValue(forKey key: String) async {
        let (cache, keySpace) = (cache, keySpace)
        await cache.change { cache.remove(key: key, keySpace: keySpace) }
    }

    /// Removes every key of this Pool.
    public nonisolated(nonsending) func removeAll() async {
        let pool = self
        await cache.change { pool.removeAll() }
    }
}

extension Kache.Queue {
    /// Appends `data`, which expires `ttl` from now, as ``push(_:ttl:)``.
    public nonisolated(nonsending) func push(_ data: Data, ttl: Duration) async throws {
        let (cache, keySpace) = (cache, keySpace)
        try await cache.change { try cache.push(data, keySpace: keySpace, ttl: ttl) }
    }

    /// Appends `data` for the configuration's `defaultTTL`.
    public nonisolated(nonsending) func push(_ data: Data) async throws {
        try await push(data, ttl: cache.configuration.defaultTTL)
    }

    /// Removes and returns the oldest live item, or nil, as ``pop()``. Not cut
    /// short by cancellation: an item taken is returned.
    public func pop() async -> Data? {
        let (cache, keySpace) = (cache, keySpace)
        return await cache.fileWork { cache.pop(keySpace: keySpace, remove: true) }
    }

    /// The oldest live item, left in the Queue.
    public func peek() async -> Data? {
        let (cache, keySpace) = (cache, keySpace)
        return await cache.fileWork { cache.pop(keySpace: keySpace, remove: false) }
    }

    /// Removes every item.
    public nonisolated(nonsending) func removeAll() async {
        let queue = self
        await cache.change { queue.removeAll() }
    }

    /// The Queue's items as they come: each is popped (removed) when the loop
    /// reaches it; when the Queue is empty the loop waits for the next push.
    /// Expired items are skipped; the sequence ends when the cache closes, and
    /// throws `CancellationError` when the task is cancelled while it waits.
    ///
    /// ```swift
    /// for try await upload in cache.defaultQueue.items {
    ///     try await send(upload)
    /// }
    /// ```
    ///
    /// Several loops may share a Queue: each item goes to one of them.
    public var items: Items { Items(queue: self) }

    /// The Queue's items as an `AsyncSequence` (``items``).
    public struct Items: AsyncSequence, Sendable {
        /// An item's value, as ``Kache/Kache/Queue/pop()-1l3yg`` returns it.
        public typealias Element = Data
        let queue: Kache.Queue

        /// An iterator that pops the Queue's items one at a time.
        public func makeAsyncIterator() -> Iterator {
            Iterator(queue: queue)
        }

        /// Pops the next item, waiting for a push when there is none.
        public struct Iterator: AsyncIteratorProtocol {
            let queue: Kache.Queue

            /// Pops the oldest live item; when there is none, waits for the next push.
            /// - Returns: the item, or nil once the cache is closed.
            /// - Throws: `CancellationError` when the task is cancelled.
            public mutating func next() async throws -> Data? {
                let waiters = queue.cache.queueWaiters
                while true {
                    try Task.checkCancellation()
                    // Read before the pop: a push after it moves the count, and the wait returns at once.
                    let seen = waiters.pushes(space: queue.space)
                    if let item = await queue.pop() { return item }
                    guard try await waiters.wait(space: queue.space, after: seen) else { return nil }
                }
            }
        }
    }
}
