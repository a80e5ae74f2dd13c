import ArgumentParser
import Foundation
import Kache

/// `kache verify DIR [--repair]`: checks every file of a cache directory.
struct VerifyCommand: DirectoryCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Read every file of a cache directory and check every checksum and header.",
        discussion: """
        Reads every entry file whole (header, lengths, checksum, LZ4 payload, and that it sits \
        under its own name), decodes the manifest and, when the manifest is current, checks that \
        every entry it lists has its file. Prints each problem found. Without --repair it takes \
        no lock and changes nothing.

        With --repair, when something is wrong, it takes the writer lock, checks again, moves the \
        damaged files (and a damaged manifest) into quarantine/ and rewrites the manifest from the \
        entry files that remain. A healthy directory is left untouched.

        \(ExitStatus.helpSection([.success, .damageFound, .usage, .notACacheDirectory, .locked, .ioFailure]))
        Code 1 is returned whenever something was found, even when --repair then fixed it.
        """
    )

    @OptionGroup var location: CacheDirectoryArgument

    @Flag(help: "Move damaged files to quarantine/ and rewrite the manifest (takes the writer lock).")
    var repair = false

    @Flag(help: "Print the result as JSON, for scripts.")
    var json = false

    func run() throws {
        let directory = try location.open()
        let verification: CacheDirectory.Verification
        var repaired: CacheDirectory.Repair?
        if repair {
            repaired = try directory.repair()
            verification = repaired!.verification
        } else {
            verification = try directory.verify()
        }
        if json {
            if let repaired { try JSONOutput.print(repaired) } else { try JSONOutput.print(verification) }
        } else {
            ValueStreams.printLine(text(verification, repaired: repaired))
        }
        guard verification.isHealthy else {
            let count = verification.problems.count
            let found = "found \(count) problem\(count == 1 ? "" : "s") in \(location.directory)"
            throw CommandFailure(.damageFound, repaired?.manifestRewritten == true ? found + "; repaired" : found)
        }
    }

    private func text(_ verification: CacheDirectory.Verification, repaired: CacheDirectory.Repair?) -> String {
        let manifest = switch verification.manifest {
        case .absent: "no manifest"
        case .current: "manifest current"
        case .stale: "manifest older than the files"
        case .damaged: "manifest damaged"
        }
        var lines = [
            "Checked \(verification.filesChecked) entry files (\(HumanReadable.bytes(verification.bytesChecked))) in \(verification.path); \(manifest)."
        ]
        guard !verification.isHealthy else {
            lines.append("All is well.")
            return lines.joined(separator: "\n")
        }
        var table = TextTable("PROBLEM", "FILE", "DETAIL")
        for problem in verification.problems {
            table.append(problem.kind.rawValue, problem.file, problem.reason)
        }
        lines.append(table.rendered(indent: 0))
        if let repaired, repaired.manifestRewritten {
            lines.append(
                "Repaired: moved \(repaired.quarantined.count) file\(repaired.quarantined.count == 1 ? "" : "s") to quarantine/ " +
                    "and rewrote the manifest (\(repaired.manifestEntries) entries)."
            )
        } else {
            lines.append("`kache verify --repair \(location.directory)` moves damaged files to quarantine/ and rewrites the manifest.")
        }
        return lines.joined(separator: "\n")
    }
}
