/// Which node serves each of the 16,384 slots: the cluster's topology as this
/// client last learned it, from `CLUSTER SLOTS`, corrected
/// slot by slot by `MOVED` replies.
///
/// A value type: the client swaps in a new one under its lock.
public struct SlotMap: Sendable, Equatable {
    /// One contiguous range of slots and its nodes.
    public struct Shard: Sendable, Equatable {
        /// The slots, inclusive at both ends as Redis reports them.
        public var slots: ClosedRange<Int>
        /// The master, which takes reads and writes.
        public var master: NodeAddress
        /// Its replicas.
        public var replicas: [NodeAddress]
    }

    /// The master of every slot, nil where no node claims it.
    private var masters: [NodeAddress?]
    /// The ranges as reported.
    public private(set) var shards: [Shard]

    /// A map with no slot assigned.
    public init() {
        masters = Array(repeating: nil, count: HashSlot.count)
        shards = []
    }

    /// A map of `shards`.
    public init(shards: [Shard]) {
        self.init()
        self.shards = shards
        for shard in shards where shard.slots.lowerBound >= 0 && shard.slots.upperBound < HashSlot.count {
            for slot in shard.slots { masters[slot] = shard.master }
        }
    }

    /// The master serving `slot`, nil when none is known.
    /// - Complexity: O(1).
    public func master(for slot: HashSlot) -> NodeAddress? { masters[slot.value] }

    /// The slots whose master is `node`, corrections by `MOVED` included.
    /// - Complexity: O(16384).
    func slots(servedBy node: NodeAddress) -> SlotSet {
        var slots = SlotSet()
        for (slot, master) in masters.enumerated() where master == node { slots.insert(HashSlot(slot)) }
        return slots
    }

    /// The replicas of `slot`'s master, as `CLUSTER SLOTS` reported them;
    /// none when a `MOVED` gave the slot a master the last report did not name.
    func replicas(for slot: HashSlot) -> [NodeAddress] {
        guard let master = masters[slot.value] else { return [] }
        return shards.first { $0.slots.contains(slot.value) && $0.master == master }?.replicas ?? []
    }

    /// Every distinct master, in the order of their first slots.
    public var masterNodes: [NodeAddress] {
        var seen = Set<NodeAddress>()
        return shards.sorted { $0.slots.lowerBound < $1.slots.lowerBound }.map(\.master).filter { seen.insert($0).inserted }
    }

    /// Whether every slot has a master.
    public var coversAllSlots: Bool { masters.allSatisfy { $0 != nil } }

    /// Records that `slot` moved to `node` (a `MOVED` reply), until the next full refresh.
    public mutating func assign(_ slot: HashSlot, to node: NodeAddress) {
        masters[slot.value] = node
    }

    /// Reads a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, …], replicas…], …]`.
    /// An empty host (a node that does not know its own address) stands for `fallbackHost`.
    public init(clusterSlots reply: RESPValue, fallbackHost: String) throws(RedisClientError) {
        guard let ranges = reply.elements else { throw .unexpectedReply(command: "CLUSTER SLOTS", reply: reply) }
        var shards: [Shard] = []
        for range in ranges {
            guard let fields = range.elements, fields.count >= 3,
                  let start = fields[0].integer, let end = fields[1].integer, start <= end,
                  start >= 0, end < HashSlot.count
            else { throw .unexpectedReply(command: "CLUSTER SLOTS", reply: range) }
            var nodes: [NodeAddress] = []
            for node in fields[2...] {
                guard let parts = node.elements, parts.count >= 2, let host = parts[0].string, let port = parts[1].integer
                else { throw .unexpectedReply(command: "CLUSTER SLOTS", reply: node) }
                nodes.append(NodeAddress(host: host.isEmpty || host == "?" ? fallbackHost : host, port: Int(port)))
            }
            shards.append(Shard(slots: Int(start)...Int(end), master: nodes[0], replicas: Array(nodes.dropFirst())))
        }
        self.init(shards: shards)
    }
}
