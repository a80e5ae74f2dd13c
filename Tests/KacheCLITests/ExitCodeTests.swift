import Foundation
import Kache
import Testing

/// Every way a command fails: its exit code (docs/CLI.md) and its one-line message.
@Suite struct ExitCodeTests {
    /// Each command, as run on `directory`: the arguments after it.
    static let commands: [(name: String, arguments: [String])] = [
        ("inspect", []), ("verify", []), ("get", ["k"]), ("set", ["k", "--ttl", "1h"]),
        ("rm", ["k"]), ("sweep", []), ("pop", ["--queue", "jobs"]),
    ]

    static func run(_ command: (name: String, arguments: [String]), on directory: String) throws -> KacheProcess.Outcome {
        try KacheProcess.run([command.name, directory] + command.arguments, input: Data("v".utf8))
    }

    @Test(arguments: commands.map(\.name))
    func missingDirectoryExits4(command: String) throws {
        let fixture = CacheDirectoryFixture()
        let outcome = try Self.run(Self.commands.first { $0.name == command }!, on: fixture.path)
        expectFailure(outcome, status: 4, message: "there is no cache directory at \(fixture.path)")
        #expect(!FileManager.default.fileExists(atPath: fixture.path), "\(command) created the directory")
    }

    @Test(arguments: commands.map(\.name))
    func folderThatIsNotACacheExits4AndStaysUntouched(command: String) throws {
        let fixture = CacheDirectoryFixture()
        try FileManager.default.createDirectory(at: fixture.url, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: fixture.url.appendingPathComponent("notes.txt"))
        let before = fixture.snapshot()
        let outcome = try Self.run(Self.commands.first { $0.name == command }!, on: fixture.path)
        expectFailure(outcome, status: 4, message: "\(fixture.path) is not a Kache cache directory: it has no objects/ folder")
        #expect(fixture.snapshot() == before, "\(command) changed a folder that is not a cache")
    }

    @Test func aFileInsteadOfAFolderExits4() throws {
        let fixture = CacheDirectoryFixture()
        try Data("x".utf8).write(to: fixture.url)
        let outcome = try KacheProcess.run(["inspect", fixture.path])
        expectFailure(outcome, status: 4, message: "is not a Kache cache directory: it is a file, not a folder")
    }

    @Test(arguments: ["inspect", "set", "rm", "sweep", "pop"])
    func damagedManifestExits7(command: String) throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { cache in try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(600)) }
        let manifest = fixture.url.appendingPathComponent("manifest")
        try fixture.truncate(manifest.path, to: 20)
        let before = fixture.snapshot()
        let outcome = try Self.run(Self.commands.first { $0.name == command }!, on: fixture.path)
        expectFailure(outcome, status: 7, message: "the manifest \(manifest.path) is damaged (manifest checksum mismatch); `kache verify --repair \(fixture.path)`")
        #expect(fixture.snapshot() == before, "\(command) changed a directory whose manifest is damaged")
    }

    @Test func missingKeysExit3() throws {
        let fixture = CacheDirectoryFixture()
        let clock = ManualClock(Date().addingTimeInterval(-3600))
        try fixture.fill(clock: clock) { cache in
            try cache.set(Data("v".utf8), forKey: "gone", ttl: .seconds(60))
            _ = try cache.queue(named: "jobs", capacity: 3)
        }
        expectFailure(try KacheProcess.run(["get", fixture.path, "nope"]), status: 3,
                      message: "no entry for key \"nope\" in the top level of \(fixture.path)")
        expectFailure(try KacheProcess.run(["get", fixture.path, "gone"]), status: 3,
                      message: "the entry for key \"gone\" in the top level expired 59m")
        expectFailure(try KacheProcess.run(["get", fixture.path, "nope", "--pool", "avatars"]), status: 3,
                      message: "no entry for key \"nope\" in Pool \"avatars\"")
        expectFailure(try KacheProcess.run(["rm", fixture.path, "nope"]), status: 3,
                      message: "no entry for key \"nope\" in the top level of \(fixture.path)")
        expectFailure(try KacheProcess.run(["rm", fixture.path, "nope", "--pool", "avatars"]), status: 3,
                      message: "there is no Pool named \"avatars\" in \(fixture.path)")
        expectFailure(try KacheProcess.run(["set", fixture.path, "k", "--ttl", "1h", "--pool", "avatars"]), status: 3,
                      message: "there is no Pool named \"avatars\" in \(fixture.path); give --capacity to create it")
        expectFailure(try KacheProcess.run(["pop", fixture.path, "--queue", "uploads"]), status: 3,
                      message: "there is no Queue named \"uploads\" in \(fixture.path)")
        expectFailure(try KacheProcess.run(["pop", fixture.path, "--queue", "jobs"]), status: 3,
                      message: "the Queue \"jobs\" is empty")
    }

    @Test(arguments: ["set", "rm", "sweep", "pop"])
    func writingToALockedDirectoryExits5NamingTheHolder(command: String) throws {
        let fixture = CacheDirectoryFixture()
        let cache = try fixture.open()
        try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(600))
        _ = try cache.queue(named: "jobs", capacity: 3)
        let before = fixture.snapshot()
        let outcome = try Self.run(Self.commands.first { $0.name == command }!, on: fixture.path)
        expectFailure(outcome, status: 5, message: "\(fixture.path) is locked by process \(getpid()), which is writing to it")
        #expect(fixture.snapshot() == before)
        #expect(cache.data(forKey: "k") == Data("v".utf8))
        try cache.close()
    }

    @Test func usageErrorsExit2() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { _ in }
        let cases: [(arguments: [String], message: String)] = [
            (["set", fixture.path, "k", "--ttl", "5x"], "a duration is a whole number of seconds"),
            (["set", fixture.path, "k", "--ttl", "0s"], "a time to live must be longer than zero"),
            (["set", fixture.path, "k"], "Missing expected argument '--ttl <duration>'"),
            (["set", fixture.path, "k", "--ttl", "1h", "--capacity", "3"], "--capacity applies to a Pool; give --pool too"),
            (["set", fixture.path, "k", "--ttl", "1h", "--pool", "p", "--capacity", "0"], "--capacity must be 1 or more"),
            (["get", fixture.path, ""], "the key is empty"),
            (["inspect", fixture.path, "--keys", "--limit=-1"], "--limit must be 0 (all) or more"),
            (["inspect", fixture.path, "--sort", "name"], "The value 'name' is invalid for '--sort <sort>'"),
            (["frobnicate"], "Unexpected argument 'frobnicate'"),
        ]
        for (arguments, message) in cases {
            let outcome = try KacheProcess.run(arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome)")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome)")
            #expect(outcome.stderr.contains("Usage: kache"), "\(arguments): \(outcome)")
            #expect(outcome.stdout.isEmpty, "\(arguments): \(outcome)")
        }
        // A key the library refuses: over 65,535 bytes, the format's limit.
        let long = String(repeating: "k", count: 70_000)
        expectFailure(try KacheProcess.run(["set", fixture.path, long, "--ttl", "1h"]), status: 2,
                      message: "The key is 70000 bytes long in UTF-8; the limit is 65535 bytes.")
    }

    @Test func fileErrorsExit6() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { cache in try cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(600)) }
        let nowhere = fixture.url.path + "-nowhere/out"
        expectFailure(try KacheProcess.run(["get", fixture.path, "k", "-o", nowhere]), status: 6,
                      message: "can't write \(nowhere): No such file or directory")
        expectFailure(try KacheProcess.run(["set", fixture.path, "k2", "--ttl", "1h", "-i", nowhere]), status: 6,
                      message: "can't read \(nowhere): No such file or directory")
        let cache = try fixture.open()
        #expect(cache.data(forKey: "k2") == nil)
        try cache.close()
    }

    @Test func gettingADamagedEntryExits1() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { cache in try cache.set(compressible(500), forKey: "k", ttl: .seconds(600)) }
        let file = try fixture.entryFile(key: "k")
        try fixture.flipBit(in: file)
        let before = fixture.snapshot()
        let outcome = try KacheProcess.run(["get", fixture.path, "k"])
        expectFailure(outcome, status: 1, message: "the file of key \"k\" (\(file.dropFirst(fixture.path.count + 1))) is damaged: checksum mismatch")
        #expect(fixture.snapshot() == before)
    }
}
