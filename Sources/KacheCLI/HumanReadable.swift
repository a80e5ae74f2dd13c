import Foundation

/// Sizes, times and keys as a person reads them.
enum HumanReadable {
    /// `512 B`, `1.5 KiB`, `12.0 MiB`, `3.2 GiB`.
    static func bytes(_ count: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard abs(count) >= 1024 else { return "\(count) B" }
        var value = Double(count) / 1024
        var unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }

    /// A span of time in its two largest units: `45s`, `12m 5s`, `3h 20m`, `6d 4h`.
    static func span(seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (days, hours, minutes, secs) = (total / 86400, total % 86400 / 3600, total % 3600 / 60, total % 60)
        if days >= 365_000 { return "\(days / 365)y" }
        if days > 0 { return hours > 0 ? "\(days)d \(hours)h" : "\(days)d" }
        if hours > 0 { return minutes > 0 ? "\(hours)h \(minutes)m" : "\(hours)h" }
        if minutes > 0 { return secs > 0 ? "\(minutes)m \(secs)s" : "\(minutes)m" }
        return "\(secs)s"
    }

    /// `in 59m 12s` or `3m ago`, relative to `now`.
    static func relative(_ date: Date, to now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        return seconds > 0 ? "in \(span(seconds: seconds))" : "\(span(seconds: -seconds)) ago"
    }

    /// `2025-06-01 12:00:00Z`: UTC, to the second.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(dateTimeSeparator: .space, timeZone: .gmt))
    }

    /// A key, key-space name or path fit for one table cell: control
    /// characters escaped (the whole shown quoted), cut to `limit` characters.
    static func cell(_ text: String, limit: Int = 60) -> String {
        let hasControl = text.unicodeScalars.contains { $0.properties.generalCategory == .control }
        let shown = hasControl ? String(reflecting: text) : text
        return shown.count > limit ? String(shown.prefix(limit - 1)) + "…" : shown
    }

    /// The display name of a key space.
    static func keySpace(_ name: String) -> String {
        name.isEmpty ? "(top level)" : cell(name, limit: 32)
    }
}
