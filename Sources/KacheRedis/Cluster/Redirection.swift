/// What a cluster node's error reply tells the client to do next.
enum Redirection: Equatable, Sendable {
    /// `MOVED slot host:port`: the slot lives there now; refresh the map.
    case moved(HashSlot, NodeAddress)
    /// `ASK slot host:port`: this one key is mid-migration; ask there once, after `ASKING`.
    case ask(HashSlot, NodeAddress)
    /// `TRYAGAIN` (a multi-key command during migration) or `CLUSTERDOWN`
    /// (the cluster is failing over): wait a little and retry.
    case retryLater
    /// `LOADING`: a restarted node reads its data; wait and retry.
    case loading

    /// The redirection an error message asks for, nil for any other error.
    init?(error message: String) {
        let words = message.split(separator: " ", maxSplits: 3)
        guard let first = words.first else { return nil }
        switch first {
        case "MOVED", "ASK":
            guard words.count >= 3, let slot = Int(words[1]), (0..<HashSlot.count).contains(slot),
                  let node = NodeAddress(words[2]) else { return nil }
            self = first == "MOVED" ? .moved(HashSlot(slot), node) : .ask(HashSlot(slot), node)
        case "TRYAGAIN", "CLUSTERDOWN":
            self = .retryLater
        case "LOADING", "MASTERDOWN":
            self = .loading
        default:
            return nil
        }
    }
}
