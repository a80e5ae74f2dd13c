/// Every key space, by number and by name. A key space's number is its place
/// here, fixed for the life of the index; 0 is the top level.
struct KeySpaces: Sendable, RandomAccessCollection, MutableCollection {
    private var spaces = [KeySpace(name: "", kind: .topLevel, capacity: .max)]
    private var numbers = ["": 0]

    /// The index keeps a key space's number in 12 bits (`IndexShard.Entry.space`).
    static let maximumCount = 1 << IndexShard.Entry.spaceBits

    var startIndex: Int { 0 }
    var endIndex: Int { spaces.count }

    subscript(space: Int) -> KeySpace {
        get { spaces[space] }
        // Yields the element in place: a get and a set would copy a key
        // space's heap and order on every change to it.
        _modify { yield &spaces[space] }
    }

    /// The number of the key space `name`, nil when there is none.
    func number(named name: String) -> Int? {
        numbers[name]
    }

    /// What `findOrAdd` found.
    enum Match {
        case found(Int)
        case added(Int)
        /// A key space of that name exists with another kind.
        case otherKind(KeySpace.Kind)
        /// There is no room for another key space.
        case full
    }

    /// The key space `name` of `kind`, added with `capacity` when there is none.
    mutating func findOrAdd(named name: String, kind: KeySpace.Kind, capacity: Int) -> Match {
        if let number = numbers[name] {
            return spaces[number].kind == kind ? .found(number) : .otherKind(spaces[number].kind)
        }
        guard spaces.count < Self.maximumCount else { return .full }
        spaces.append(KeySpace(name: name, kind: kind, capacity: capacity))
        numbers[name] = spaces.count - 1
        return .added(spaces.count - 1)
    }

    /// Traps unless every key space is found under its own name at its own number.
    func checkInvariants() {
        precondition(numbers.count == spaces.count, "\(numbers.count) names for \(spaces.count) key spaces")
        for (number, space) in spaces.enumerated() {
            precondition(numbers[space.name] == number, "key space \(space.name) is not found at its number \(number)")
        }
    }
}
