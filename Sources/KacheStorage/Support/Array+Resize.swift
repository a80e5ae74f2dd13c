extension Array {
    /// Makes the array `count` long: elements past it are dropped, new ones
    /// are `filler`, and those kept keep their values. For storage reused
    /// from one block to the next, whose every element the reader then
    /// overwrites: zeroed afresh each time (`removeAll`, then
    /// `append(contentsOf: repeatElement(…))`, element by element), it cost
    /// an open about 35 instructions a record.
    mutating func resize(to count: Int, filler: Element) {
        if self.count > count {
            removeLast(self.count - count)
        } else if self.count < count {
            append(contentsOf: repeatElement(filler, count: count - self.count))
        }
    }
}
