import ArgumentParser
import Foundation
import Kache

/// `kache`: inspect, verify and edit a Kache cache directory from the shell.
@main
struct KacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kache",
        abstract: "Inspect, verify and edit a Kache cache directory.",
        discussion: """
        init creates a cache directory. inspect and verify only read: they take no lock and change nothing, so they work \
        while an application writes to the directory. get reads the entry's file the same way. \
        set, rm, sweep, push and pop open the directory as a writer: they take its lock (and say who \
        holds it when they can't) and, like any writer opening it, remove expired entries.

        \(ExitStatus.helpSection(ExitStatus.allCases))
        """,
        subcommands: [
            InitCommand.self, InspectCommand.self, VerifyCommand.self, GetCommand.self, SetCommand.self,
            RemoveCommand.self, SweepCommand.self, PushCommand.self, PopCommand.self,
        ]
    )

    /// Parses and runs a command; maps every failure to its exit code and a
    /// one-line message (ExitStatus.swift), and usage errors to code 2.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(parsing: error)
        }
        do {
            try command.run()
        } catch {
            let isOurs = error is CommandFailure || error is CacheDirectoryError || error is KacheError
            // ArgumentParser's own, such as the help request of a command without a `run`.
            if !isOurs, exitCode(for: error).isSuccess || error is ExitCode { exit(withError: error) }
            exit(failing: error, in: (command as? DirectoryCommand)?.location.directory)
        }
        Foundation.exit(ExitStatus.success.rawValue)
    }

    /// Exits after a parsing error: help (0) as ArgumentParser prints it, a usage
    /// error with code 2 (ArgumentParser's own is 64, `EX_USAGE`; docs/CLI.md promises 2).
    private static func exit(parsing error: any Error) -> Never {
        guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
        ValueStreams.printError(fullMessage(for: error))
        Foundation.exit(ExitStatus.usage.rawValue)
    }

    /// Exits with the code and the one-line message of a command's failure.
    private static func exit(failing error: any Error, in directory: String?) -> Never {
        let failure = CommandFailure(error, directory: directory)
        if let line = failure.line { ValueStreams.printError("kache: \(line)") }
        Foundation.exit(failure.status.rawValue)
    }
}

/// A command that works on one cache directory, named in error messages.
protocol DirectoryCommand: ParsableCommand {
    var location: CacheDirectoryArgument { get }
}
