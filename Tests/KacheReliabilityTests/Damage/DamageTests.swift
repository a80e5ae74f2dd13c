import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 6, part 2: in a directory of 10,000 entries, files with flipped
/// bits, cut short, zeroed or swapped, and a manifest full of garbage. Every
/// read of a damaged entry is a miss, the file goes to quarantine and is
/// counted (by `statistics` and by `CacheDirectory.verify()`, which is what
/// `kache verify` runs), and every other entry still reads back exactly.
@Suite struct DamageTests {
    static let entryCount = 10_000
    /// Files broken per kind of damage (swaps break two files each).
    static let perKind = 30

    @Test func damagedFilesReadAsMissesAndAreQuarantined() throws {
        let scratch = ScratchFolder()
        let fixture = try DamageFixture.make(in: scratch.child("cache"), count: Self.entryCount, seed: 1)
        var random = SeededRandom(seed: 2)
        let damaged = try breakFiles(of: fixture, using: &random)

        let verification = try CacheDirectory(url: fixture.directory).verify()
        #expect(verification.manifest == .current)
        #expect(verification.filesChecked == Self.entryCount)
        #expect(Set(verification.problems.map(\.file)) == Set(damaged.keys.map { fixture.file(of: $0).relative }))
        #expect(verification.problems.allSatisfy { $0.kind == .damagedFile })
        // The `kache verify` command reports the same, and says so by its exit status.
        #expect(try kacheVerify(fixture.directory, scratch: scratch) == verification)

        // The manifest is current, so opening reads no file: each damage is found by the read.
        let cache = try Kache(directory: fixture.directory, configuration: .reliability(.sync))
        let (misses, wrong) = try fixture.readAll(cache)
        #expect(wrong == 0, "damaged files returned wrong bytes")
        #expect(misses == Set(damaged.keys), "misses \(misses.subtracting(damaged.keys)) were not damaged; damaged \(Set(damaged.keys).subtracting(misses)) did not miss")
        #expect(cache.statistics.quarantined == UInt64(damaged.count))
        #expect(DirectoryListing(root: fixture.directory).quarantinedFiles.count == damaged.count)
        try cache.close()

        // Quarantined entries stay gone; everything else is still there.
        #expect(try CacheDirectory(url: fixture.directory).verify().isHealthy)
        let reopened = try Kache(directory: fixture.directory, configuration: .reliability(.sync))
        #expect(try fixture.readAll(reopened) == (Set(damaged.keys), 0))
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    @Test func aGarbageManifestFallsBackToTheFileHeaders() throws {
        let scratch = ScratchFolder()
        let fixture = try DamageFixture.make(in: scratch.child("cache"), count: Self.entryCount, seed: 3)
        var random = SeededRandom(seed: 4)
        let damaged = try breakFiles(of: fixture, using: &random)
        let manifest = fixture.directory.appendingPathComponent(DiskStore.manifestFile)
        let length = try Data(contentsOf: manifest).count
        try random.bytes(length).write(to: manifest)

        let verification = try CacheDirectory(url: fixture.directory).verify()
        #expect(verification.manifest == .damaged)
        #expect(verification.problems.filter { $0.kind == .damagedManifest }.count == 1)
        #expect(verification.problems.filter { $0.kind == .damagedFile }.count == damaged.count)

        // Opening quarantines the manifest and rebuilds the index from every
        // file's header, quarantining the files whose header is wrong; the
        // others are caught by their checksum when read.
        let cache = try Kache(directory: fixture.directory, configuration: .reliability(.sync))
        let (misses, wrong) = try fixture.readAll(cache)
        #expect(wrong == 0, "damaged files returned wrong bytes")
        #expect(misses == Set(damaged.keys))
        #expect(cache.statistics.quarantined == UInt64(damaged.count + 1))
        #expect(DirectoryListing(root: fixture.directory).quarantinedFiles.count == damaged.count + 1)
        #expect(cache.keySpaces.contains { $0.name == DamageFixture.poolName && $0.count == Self.entryCount / 10 - damagedInPool(damaged, fixture) })
        try cache.close()
        #expect(try CacheDirectory(url: fixture.directory).verify().isHealthy)
    }

    @Test(arguments: ManifestDamage.allCases)
    func aDamagedManifestIsRebuiltFromTheHeaders(_ damage: ManifestDamage) throws {
        let scratch = ScratchFolder()
        let fixture = try DamageFixture.make(in: scratch.child("cache"), count: 500, seed: 5)
        try damage.apply(to: fixture.directory)
        let cache = try Kache(directory: fixture.directory, configuration: .reliability(.sync))
        #expect(try fixture.readAll(cache) == ([], 0))
        #expect(cache.statistics.quarantined == 1)
        try cache.close()
        let reopened = try Kache(directory: fixture.directory, configuration: .reliability(.sync))
        #expect(try fixture.readAll(reopened) == ([], 0))
        try reopened.close()
    }

    /// A bit flipped in the expiry field can make a damaged entry look expired.
    /// When the manifest is not trusted, opening trusts the headers (it reads
    /// no payload, so checks no checksum) and deletes such a file as expired:
    /// the damage is neither quarantined nor counted.
    @Test func aFlippedExpiryIsQuarantinedNotSwept() throws {
        let scratch = ScratchFolder()
        let fixture = try DamageFixture.make(in: scratch.child("cache"), count: 20, seed: 6)
        let path = fixture.file(of: 7).path
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The expiry is ~1.8e18 ns (ManualClock's 2027); bit 60 is set, and clearing it moves the expiry to 1990.
        bytes[EntryFile.Offset.expiry + 7] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(DiskStore.manifestFile))

        let verification = try CacheDirectory(url: fixture.directory).verify()
        #expect(verification.problems.map(\.file) == [fixture.file(of: 7).relative])
        let cache = try Kache(directory: fixture.directory, configuration: .reliability(.sync))
        #expect(try fixture.readAll(cache) == ([7], 0))
        #expect(cache.statistics.quarantined == 1, "the damaged file was deleted as expired, not quarantined and counted")
        #expect(DirectoryListing(root: fixture.directory).quarantinedFiles.count == 1)
        try cache.close()
    }

    /// A flipped kind byte (a Pool's entry claiming to be top-level) passes the
    /// header checks of the open-time scan, which then skips the file when its
    /// kind disagrees with its key space, instead of quarantining it; and when
    /// the file is the first of its key space to be restored, the key space is
    /// created with the wrong kind and every other entry of it is skipped.
    @Test func aFlippedKindIsQuarantinedAndHidesNothing() throws {
        let scratch = ScratchFolder()
        let fixture = try DamageFixture.make(in: scratch.child("cache"), count: 40, seed: 7)
        // Entry 0 is the Pool's first (lowest sequence); make it claim the top level's kind.
        #expect(fixture.entries[0].space == DamageFixture.poolName)
        let path = fixture.file(of: 0).path
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[EntryFile.Offset.kind] = KeySpace.Kind.topLevel.rawValue
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(at: fixture.directory.appendingPathComponent(DiskStore.manifestFile))

        let cache = try Kache(directory: fixture.directory, configuration: .reliability(.sync))
        let read = try #require(try? fixture.readAll(cache), "the Pool's key space was restored with the damaged file's kind")
        #expect(read == ([0], 0), "entries of the Pool were hidden by one damaged file")
        #expect(cache.statistics.quarantined == 1, "the damaged file was skipped, not quarantined and counted")
        try cache.close()
        #expect(try CacheDirectory(url: fixture.directory).verify().isHealthy)
    }

    /// Runs `kache verify DIR --json`, checks it exits 1 (problems found), and decodes what it printed.
    private func kacheVerify(_ directory: URL, scratch: ScratchFolder) throws -> CacheDirectory.Verification {
        let tool = try ChildProcess.kache(["verify", directory.path, "--json"], outputPath: scratch.child("verify.json").path)
        #expect(try tool.wait(timeout: .seconds(120)) == 1)
        return try JSONDecoder().decode(CacheDirectory.Verification.self, from: Data(tool.output().utf8))
    }

    /// Breaks `perKind` files per kind of damage (swaps: `perKind` pairs);
    /// returns the index of every entry broken, with how.
    private func breakFiles(of fixture: DamageFixture, using random: inout SeededRandom) throws -> [Int: FileDamage] {
        var candidates = Array(fixture.entries.indices).shuffled(using: &random)
        var damaged: [Int: FileDamage] = [:]
        for damage in FileDamage.allCases {
            for _ in 0 ..< Self.perKind {
                let index = candidates.removeLast()
                let other = damage == .swapped ? candidates.removeLast() : index
                try damage.apply(to: fixture.file(of: index).path, other: fixture.file(of: other).path, using: &random)
                damaged[index] = damage
                damaged[other] = damage
            }
        }
        return damaged
    }

    private func damagedInPool(_ damaged: [Int: FileDamage], _ fixture: DamageFixture) -> Int {
        damaged.keys.filter { fixture.entries[$0].space == DamageFixture.poolName }.count
    }
}

/// Ways to break the manifest.
enum ManifestDamage: CaseIterable, CustomStringConvertible {
    case garbage, truncated, empty, flippedByte, entryFileInItsPlace

    var description: String {
        switch self {
        case .garbage: "garbage"
        case .truncated: "truncated"
        case .empty: "empty"
        case .flippedByte: "flipped byte"
        case .entryFileInItsPlace: "an entry file in its place"
        }
    }

    func apply(to directory: URL) throws {
        let manifest = directory.appendingPathComponent(DiskStore.manifestFile)
        var bytes = [UInt8](try Data(contentsOf: manifest))
        var random = SeededRandom(seed: UInt64(bytes.count))
        switch self {
        case .garbage: bytes = [UInt8](random.bytes(bytes.count))
        case .truncated: bytes = Array(bytes.prefix(bytes.count / 2))
        case .empty: bytes = []
        case .flippedByte: bytes[bytes.count / 3] ^= 0xFF
        case .entryFileInItsPlace:
            let entry = try #require(DirectoryListing(root: directory).entryFiles().first)
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: entry)))
        }
        try Data(bytes).write(to: manifest)
    }
}
