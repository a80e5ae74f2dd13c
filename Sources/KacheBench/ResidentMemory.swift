import Foundation

/// The process's resident memory, from /proc/self/status.
///
/// The peak (VmHWM) is reset at the start of every measured run, by writing
/// 5 to /proc/self/clear_refs (Linux ≥ 4.0), so that each run reports its own
/// peak rather than the highest of every workload before it. The peak
/// includes the run's pre-generated inputs, which stay resident throughout.
enum ResidentMemory {
    /// Resets the peak to the current resident size; false where the kernel refuses.
    @discardableResult
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// The highest resident size since the last reset (or since start), in bytes.
    static func peakBytes() -> Int? { field("VmHWM") }

    /// The resident size now, in bytes.
    static func currentBytes() -> Int? { field("VmRSS") }

    private static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }
}
