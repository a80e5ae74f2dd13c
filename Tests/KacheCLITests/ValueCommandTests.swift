import Foundation
import Kache
import Testing

@Suite struct ValueCommandTests {
    @Test func getWritesTheExactBytesToStdoutOrAFile() throws {
        let fixture = CacheDirectoryFixture()
        let binary = Data((0 ..< 3000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try fixture.fill { cache in
            try cache.set(binary, forKey: "blob", ttl: .seconds(600))
            try cache.pool(named: "avatars", capacity: 3).set(Data("png".utf8), forKey: "user/1", ttl: .seconds(600))
        }
        let top = try KacheProcess.run(["get", fixture.path, "blob"])
        #expect(top.status == 0, "\(top)")
        #expect(top.stdout == binary)
        #expect(top.stderr.isEmpty)

        let pooled = try KacheProcess.run(["get", fixture.path, "user/1", "--pool", "avatars"])
        #expect(pooled.stdout == Data("png".utf8))

        let out = try fixture.scratchFile("out.bin")
        let toFile = try KacheProcess.run(["get", fixture.path, "blob", "-o", out.path])
        #expect(toFile.status == 0, "\(toFile)")
        #expect(toFile.stdout.isEmpty)
        #expect(try Data(contentsOf: out) == binary)
    }

    @Test func setStoresWhatTheLibraryReadsBack() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill(defaultPoolCapacity: 7) { cache in
            _ = try cache.pool(named: "avatars", capacity: 3)
        }
        let value = compressible(5000)
        let top = try KacheProcess.run(["set", fixture.path, "greeting", "--ttl", "1h"], input: value)
        #expect(top.status == 0, "\(top)")
        #expect(top.output.hasPrefix("Stored 4.9 KiB under \"greeting\""))
        let pooled = try KacheProcess.run(["set", fixture.path, "user/9", "--ttl", "7d", "--pool", "avatars"], input: Data("x".utf8))
        #expect(pooled.status == 0, "\(pooled)")
        let input = try fixture.scratchFile("thumb.png")
        try Data("thumb".utf8).write(to: input)
        let created = try KacheProcess.run(["set", fixture.path, "t", "--ttl", "90s", "--pool", "thumbs", "--capacity", "12", "-i", input.path])
        #expect(created.status == 0, "\(created)")

        let cache = try fixture.open(defaultPoolCapacity: 7)
        #expect(cache.data(forKey: "greeting") == value)
        let avatars = try cache.pool(named: "avatars", capacity: 3)
        #expect(avatars.data(forKey: "user/9") == Data("x".utf8))
        #expect(cache.keySpaces.first { $0.name == "thumbs" }?.capacity == 12)
        #expect(try cache.pool(named: "thumbs", capacity: 12).data(forKey: "t") == Data("thumb".utf8))
        #expect(cache.keySpaces.first { $0.name == Kache.defaultPoolName }?.capacity == 7, "the CLI kept the saved default Pool capacity")
        try cache.close()
    }

    @Test(arguments: [("90s", 90), ("15m", 900), ("1h", 3600), ("7d", 604_800), ("3600", 3600)])
    func durationsAreAcceptedInEveryForm(text: String, seconds: Int) throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { _ in }
        let start = Date()
        let outcome = try KacheProcess.run(["set", fixture.path, "k", "--ttl", text], input: Data("v".utf8))
        #expect(outcome.status == 0, "\(outcome)")
        guard case let .found(_, entry) = try CacheDirectory(url: fixture.url).lookUp(key: "k") else {
            Issue.record("the value was not stored: \(outcome)")
            return
        }
        let lived = entry.expiry.timeIntervalSince(start)
        #expect(lived >= Double(seconds) - 1 && lived <= Double(seconds) + 30, "\(text) gave \(lived) s")
    }

    @Test func rmRemovesTheEntryAndItsFile() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { cache in
            try cache.set(Data("a".utf8), forKey: "a", ttl: .seconds(600))
            try cache.set(Data("b".utf8), forKey: "b", ttl: .seconds(600))
            try cache.pool(named: "p", capacity: 2).set(Data("c".utf8), forKey: "c", ttl: .seconds(600))
        }
        let file = try fixture.entryFile(key: "a")
        let outcome = try KacheProcess.run(["rm", fixture.path, "a"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output == "Removed \"a\" from the top level.\n")
        #expect(!FileManager.default.fileExists(atPath: file))
        let pooled = try KacheProcess.run(["rm", fixture.path, "c", "--pool", "p"])
        #expect(pooled.status == 0, "\(pooled)")

        let cache = try fixture.open()
        #expect(cache.data(forKey: "a") == nil)
        #expect(cache.data(forKey: "b") == Data("b".utf8))
        #expect(try cache.pool(named: "p", capacity: 2).count == 0)
        try cache.close()
    }

    @Test func sweepRemovesExpiredEntriesAndSaysHowMany() throws {
        let fixture = CacheDirectoryFixture()
        let clock = ManualClock(Date().addingTimeInterval(-7200))
        try fixture.fill(clock: clock) { cache in
            for index in 0 ..< 3 { try cache.set(Data("old".utf8), forKey: "old\(index)", ttl: .seconds(60)) }
            try cache.set(Data("new".utf8), forKey: "new", ttl: .seconds(86400))
        }
        let outcome = try KacheProcess.run(["sweep", fixture.path])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output == "Removed 3 expired entries; 1 remain.\n")
        let summary = try KacheProcess.run(["inspect", fixture.path, "--json"]).decoded(InspectJSON.self).summary
        #expect(summary.entries == 1)
        #expect(summary.filesOnDisk == 1)
        let again = try KacheProcess.run(["sweep", fixture.path])
        #expect(again.output == "Removed 0 expired entries; 1 remain.\n")
    }

    @Test func popTakesTheOldestItemOfAQueue() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { cache in
            let jobs = try cache.queue(named: "jobs", capacity: 10)
            for index in 1 ... 3 { try jobs.push(Data("job-\(index)".utf8), ttl: .seconds(600)) }
        }
        let first = try KacheProcess.run(["pop", fixture.path, "--queue", "jobs"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout == Data("job-1".utf8))
        let out = try fixture.scratchFile("job")
        let second = try KacheProcess.run(["pop", fixture.path, "--queue", "jobs", "-o", out.path])
        #expect(second.status == 0, "\(second)")
        #expect(try Data(contentsOf: out) == Data("job-2".utf8))

        let cache = try fixture.open()
        let jobs = try cache.queue(named: "jobs", capacity: 10)
        #expect(jobs.count == 1)
        #expect(jobs.pop() == Data("job-3".utf8))
        try cache.close()
    }

    @Test func pushAppendsToAQueueThatPopThenTakesInOrder() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { _ in }
        let first = try KacheProcess.run(["push", fixture.path, "--queue", "jobs", "--capacity", "2", "--ttl", "10m"], input: Data("job-1".utf8))
        #expect(first.status == 0, "\(first)")
        #expect(first.output == "Pushed 5 B onto Queue \"jobs\" (1 of 2 items).\n")
        let input = try fixture.scratchFile("job")
        for index in 2 ... 3 {
            try Data("job-\(index)".utf8).write(to: input)
            let outcome = try KacheProcess.run(["push", fixture.path, "--queue", "jobs", "--ttl", "10m", "-i", input.path])
            #expect(outcome.status == 0, "\(outcome)")
        }
        // A full Queue drops its oldest item.
        let cache = try fixture.open()
        let jobs = try cache.queue(named: "jobs", capacity: 2)
        #expect(jobs.pop() == Data("job-2".utf8))
        #expect(jobs.pop() == Data("job-3".utf8))
        #expect(jobs.pop() == nil)
        try cache.close()
    }

    @Test func pushToAQueueThatDoesNotExistNeedsACapacity() throws {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { _ in }
        let outcome = try KacheProcess.run(["push", fixture.path, "--queue", "jobs", "--ttl", "10m"], input: Data("job".utf8))
        #expect(outcome.status == 3, "\(outcome)")
        #expect(outcome.stderr.contains("give --capacity to create it"), "\(outcome)")
        let summary = try KacheProcess.run(["inspect", fixture.path, "--json"]).decoded(InspectJSON.self).summary
        #expect(summary.entries == 0)
    }

    @Test func everyCommandHasHelpWithItsExitCodes() throws {
        for command in ["inspect", "verify", "get", "set", "rm", "sweep", "push", "pop"] {
            let outcome = try KacheProcess.run([command, "--help"])
            #expect(outcome.status == 0, "\(command): \(outcome)")
            #expect(outcome.output.contains("USAGE: kache \(command)"), "\(command): \(outcome)")
            #expect(outcome.output.contains("EXIT CODES"), "\(command): \(outcome)")
        }
        let root = try KacheProcess.run(["--help"])
        #expect(root.status == 0)
        for status in 0 ... 7 {
            #expect(root.output.contains("\n  \(status)  "), "exit code \(status) is not documented")
        }
    }
}
