import Foundation

/// The Queue operations of one run, in journal order (one thread runs them
/// all, so the journal order is their order), and the FIFO they imply.
struct QueueHistory {
    private enum Operation {
        case push(item: UInt64, begin: Int, ack: Int?)
        case pop(begin: Int, ack: Int?, item: UInt64?)
    }

    private var operations: [Operation] = []
    /// Every item whose push began, in push order.
    private(set) var pushed: [UInt64] = []

    mutating func begin(push item: UInt64, at index: Int) {
        operations.append(.push(item: item, begin: index, ack: nil))
        pushed.append(item)
    }

    mutating func begin(popAt index: Int) {
        operations.append(.pop(begin: index, ack: nil, item: nil))
    }

    mutating func acknowledgePush(begunAt begin: Int, at index: Int) {
        guard let position = operations.lastIndex(where: { if case .push(_, begin, _) = $0 { true } else { false } }),
              case let .push(item, _, _) = operations[position] else { return }
        operations[position] = .push(item: item, begin: begin, ack: index)
    }

    mutating func acknowledgePop(begunAt begin: Int, at index: Int, item: UInt64?) {
        guard let position = operations.lastIndex(where: { if case .pop(begin, _, _) = $0 { true } else { false } }) else { return }
        operations[position] = .pop(begin: begin, ack: index, item: item)
    }

    /// What the Queue must and must not hold after the run, given the journal
    /// index `cut` before which everything acknowledged is promised (`Int.max`
    /// in `sync` durability), and the pops that did not take the oldest item
    /// (which must be none).
    ///
    /// Required: the items queued at the cut that no pop took since (a pop
    /// after the cut may have reached the disk). Forbidden: the items popped
    /// before the cut.
    func expectations(cut: Int) -> (required: [UInt64], forbidden: Set<UInt64>, outOfOrder: [String]) {
        var fifo: [UInt64] = []
        var atCut: [UInt64]?
        var forbidden = Set<UInt64>()
        var taken = Set<UInt64>()
        var outOfOrder: [String] = []
        var interruptedPop = false
        for operation in operations {
            switch operation {
            case let .push(item, begin, ack):
                if begin >= cut, atCut == nil { atCut = fifo }
                if ack != nil { fifo.append(item) }
            case let .pop(begin, ack, item):
                if begin >= cut, atCut == nil { atCut = fifo }
                guard let ack else { interruptedPop = true; continue }
                if let item {
                    if fifo.first != item {
                        outOfOrder.append("pop returned item \(item) while the oldest was \(fifo.first.map(String.init) ?? "none")")
                    }
                    fifo.removeAll { $0 == item }
                    taken.insert(item)
                    if ack < cut { forbidden.insert(item) }
                } else if !fifo.isEmpty {
                    outOfOrder.append("pop returned nothing with \(fifo.count) items queued")
                }
            }
        }
        var required = (atCut ?? fifo).filter { !taken.contains($0) }
        // A pop the kill interrupted may have taken the oldest item.
        if interruptedPop, !required.isEmpty { required.removeFirst() }
        return (required, forbidden, outOfOrder)
    }
}
