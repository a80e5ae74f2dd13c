import Kache

extension KacheError {
    /// The cases of `KacheError` without their associated values.
    ///
    /// For a test that names the case a path must throw where the values
    /// are prose (a reason) or beside the point. Where the test knows every
    /// value, it compares the whole error instead:
    /// `#expect(throws: KacheError.diskFull(path: path))`.
    public enum Case: Sendable, Equatable {
        case emptyKey, keyTooLong, invalidTTL, valueTooLarge, directoryLocked, directoryUnusable, diskFull, io, closed
        case invalidConfiguration, invalidKeySpaceName, exceedsDiskBudget, invalidCapacity, encodingFailed, decodingFailed
    }

    /// This error's case.
    ///
    /// ```swift
    /// let error = #expect(throws: KacheError.self) { try cache.pool(named: "", capacity: 1) }
    /// #expect(error?.case == .invalidKeySpaceName)
    /// ```
    public var `case`: Case {
        switch self {
        case .emptyKey: .emptyKey
        case .keyTooLong: .keyTooLong
        case .invalidTTL: .invalidTTL
        case .valueTooLarge: .valueTooLarge
        case .directoryLocked: .directoryLocked
        case .directoryUnusable: .directoryUnusable
        case .diskFull: .diskFull
        case .io: .io
        case .closed: .closed
        case .invalidConfiguration: .invalidConfiguration
        case .invalidKeySpaceName: .invalidKeySpaceName
        case .exceedsDiskBudget: .exceedsDiskBudget
        case .invalidCapacity: .invalidCapacity
        case .encodingFailed: .encodingFailed
        case .decodingFailed: .decodingFailed
        }
    }
}
