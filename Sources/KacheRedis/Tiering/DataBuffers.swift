import Foundation
import NIOCore

// A copy of a reply's bytes as Foundation's `Data`, without
// NIOFoundationCompat: the target depends on NIOCore and NIOPosix only.
// (`Data` going the other way is a `RESPArgument` of its own, copied only into the write.)

extension Data {
    /// A copy of the readable bytes of `buffer`.
    init(copying buffer: ByteBuffer) {
        self = buffer.withUnsafeReadableBytes { Data($0) }
    }
}
