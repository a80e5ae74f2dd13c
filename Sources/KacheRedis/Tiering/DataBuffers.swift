import Foundation
import NIOCore

// Copies between Foundation's `Data` and NIO's `ByteBuffer`, without
// NIOFoundationCompat: the target depends on NIOCore and NIOPosix only.

extension ByteBuffer {
    /// A buffer holding a copy of `data`.
    init(copying data: Data) {
        self.init()
        reserveCapacity(data.count)
        data.withUnsafeBytes { _ = writeBytes($0) }
    }
}

extension Data {
    /// A copy of the readable bytes of `buffer`.
    init(copying buffer: ByteBuffer) {
        self = buffer.withUnsafeReadableBytes { Data($0) }
    }
}
