import Foundation
import Kache

/// The text `kache inspect` prints.
struct InspectText {
    var summary: CacheDirectory.Summary

    func rendered() -> String {
        [overview(), expiry(), largest(), pools(), queues(), damaged()].compactMap { $0 }.joined(separator: "\n\n")
    }

    private var now: Date { summary.inspectedAt }

    private func overview() -> String {
        let s = summary
        var facts: [(String, String)] = []
        facts.append(("format", "entry files v\(s.formatVersion)" + (s.manifestVersion.map { ", manifest v\($0)" } ?? "")))
        if let saved = s.manifestSavedAt {
            let state = s.manifestIsCurrent ? "current" : "older than the files"
            // A save is never in the future: a later date is another machine's clock, or a cache clock an older version dated it by.
            let when = saved > now ? "ahead of this machine's clock" : HumanReadable.relative(saved, to: now)
            facts.append(("manifest", "saved \(HumanReadable.timestamp(saved)) (\(when)), \(state)"))
        } else {
            facts.append(("manifest", "none yet"))
        }
        facts.append(("index read from", s.indexSource == .manifest ? "the manifest" : "the entry files' headers"))
        if s.lockHeld {
            facts.append(("writer", s.writerPID.map { "process \($0) holds the lock" } ?? "a process of unknown pid holds the lock"))
        } else {
            facts.append(("writer", "none (the lock is free)"))
        }
        let topLevel = s.keySpaces.first { $0.kind == .topLevel }?.count ?? 0
        facts.append(("entries", "\(s.liveEntries) live, \(s.expiredEntries) expired (\(s.entries) in all, \(topLevel) at the top level)"))
        let ratio = String(format: "%.2f×", s.compressionRatio)
        facts.append(("bytes", "\(HumanReadable.bytes(s.rawBytes)) raw, \(HumanReadable.bytes(s.storedBytes)) stored (\(ratio) smaller)"))
        facts.append(("entry files", "\(s.filesOnDisk) files, \(HumanReadable.bytes(s.bytesOnDisk)) (\(HumanReadable.bytes(s.allocatedBytes)) allocated)"))
        if !s.segments.isEmpty {
            let bytes = s.segments.reduce(0) { $0 + $1.bytes }
            let dead = bytes == 0 ? 0 : Double(s.deadBytes) / Double(bytes) * 100
            let torn = s.segments.reduce(0) { $0 + $1.tornTailBytes }
            facts.append((
                "segments",
                "\(s.segments.count) files, \(HumanReadable.bytes(bytes)): \(HumanReadable.bytes(bytes - s.deadBytes)) live, "
                    + "\(HumanReadable.bytes(s.deadBytes)) dead (\(String(format: "%.1f", dead))% fragmentation)"
                    + (torn > 0 ? ", \(HumanReadable.bytes(torn)) of torn tails" : "")
            ))
        }
        if let budget = s.diskBudget {
            let percent = Double(s.directoryBytes) / Double(budget) * 100
            facts.append(("disk budget", "\(HumanReadable.bytes(s.directoryBytes)) of \(HumanReadable.bytes(budget)) used (\(String(format: "%.1f", percent))%)"))
            // The queues live in memory: what a directory opens with is all there is to show.
            facts.append(("eviction", "S3-FIFO: on open the \(s.liveEntries) live entries join the main queue, "
                + "the first written first (reads are not saved); new keys wait in the small queue"))
        }
        if s.unindexedFiles > 0 {
            facts.append(("unindexed", "\(s.unindexedFiles) entry files the index does not list"))
        }
        facts.append(("damaged", "\(s.damagedFiles.count) files"))
        facts.append(("quarantined", "\(s.quarantinedFiles) files, \(HumanReadable.bytes(s.quarantinedBytes))"))
        facts.append(("temporary", "\(s.temporaryFiles) files"))
        let width = facts.map(\.0.count).max() ?? 0
        let lines = facts.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
        return (["Kache cache directory \(s.path)"] + lines).joined(separator: "\n")
    }

    private func expiry() -> String {
        let e = summary.expiry
        var table = TextTable("EXPIRES", ">ENTRIES")
        table.append("already (not swept yet)", "\(e.expired)")
        table.append("within a minute", "\(e.withinMinute)")
        table.append("within an hour", "\(e.withinHour)")
        table.append("within a day", "\(e.withinDay)")
        table.append("within a week", "\(e.withinWeek)")
        table.append("later", "\(e.later)")
        return "Expiry\n" + table.rendered()
    }

    private func largest() -> String? {
        guard !summary.largestEntries.isEmpty else { return nil }
        return "Largest entries\n" + InspectText.entryTable(summary.largestEntries, now: now).rendered()
    }

    private func pools() -> String? {
        let pools = summary.keySpaces.filter { $0.kind == .pool }
        guard !pools.isEmpty else { return nil }
        var table = TextTable("POOL", ">COUNT", ">CAPACITY", ">EXPIRED", ">EVICTIONS", ">SIZE")
        for pool in pools {
            table.append(
                HumanReadable.keySpace(pool.name), "\(pool.count)", InspectText.capacity(pool.capacity),
                "\(pool.expired)", "\(pool.evictions)", HumanReadable.bytes(pool.rawBytes)
            )
        }
        return "Pools\n" + table.rendered()
    }

    private func queues() -> String? {
        let queues = summary.keySpaces.filter { $0.kind == .queue }
        guard !queues.isEmpty else { return nil }
        var table = TextTable("QUEUE", ">COUNT", ">CAPACITY", ">EXPIRED", ">PUSHES", ">POPS", ">DROPPED", ">SIZE")
        for queue in queues {
            table.append(
                HumanReadable.keySpace(queue.name), "\(queue.count)", InspectText.capacity(queue.capacity), "\(queue.expired)",
                "\(queue.pushes)", "\(queue.pops)", "\(queue.evictions)", HumanReadable.bytes(queue.rawBytes)
            )
        }
        return "Queues\n" + table.rendered()
    }

    private func damaged() -> String? {
        guard !summary.damagedFiles.isEmpty else { return nil }
        var table = TextTable("FILE", "PROBLEM")
        for file in summary.damagedFiles {
            table.append(file.file, file.reason)
        }
        return "Damaged files (`kache verify --repair` moves them to quarantine)\n" + table.rendered()
    }

    static func capacity(_ capacity: Int) -> String {
        capacity == .max ? "unbounded" : "\(capacity)"
    }

    static func entryTable(_ entries: [CacheDirectory.Entry], now: Date) -> TextTable {
        var table = TextTable("KEY", "KEY SPACE", ">SIZE", ">STORED", "EXPIRES")
        for entry in entries {
            table.append(
                HumanReadable.cell(entry.key), HumanReadable.keySpace(entry.keySpace),
                HumanReadable.bytes(entry.size), HumanReadable.bytes(entry.storedSize),
                "\(HumanReadable.timestamp(entry.expiry)) (\(HumanReadable.relative(entry.expiry, to: now)))"
            )
        }
        return table
    }

    /// The `--keys` list: `listed` of `total` keys.
    static func keyList(_ listed: [CacheDirectory.Entry], of total: Int, now: Date, limit: Int) -> String {
        let heading = listed.count == total ? "Keys (\(total))" : "Keys (\(listed.count) of \(total); --limit 0 lists all)"
        return heading + "\n" + entryTable(listed, now: now).rendered()
    }
}
