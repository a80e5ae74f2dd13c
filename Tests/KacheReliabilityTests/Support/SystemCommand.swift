import Foundation

/// Runs a system tool (`mount`, `chattr`) and returns its exit status, with
/// what it printed on stderr; 127 when it can't be started.
@discardableResult
func runSystemCommand(_ arguments: [String]) -> (status: Int32, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    do {
        try process.run()
    } catch {
        return (127, "\(error)")
    }
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stderr, as: UTF8.self))
}
