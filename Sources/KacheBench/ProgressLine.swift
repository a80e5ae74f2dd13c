import Foundation
import Synchronization

/// The line on stderr that says what runs and how fast, rewritten in place
/// five times a second while a timed loop runs:
///
///     W2 read-hot · async · 2 threads · run 2/3 · 45% · 3.1 M gets/s
///
/// Silent when stderr is not a terminal, or with `--quiet`. The loops only
/// add to an atomic counter (every 1,024 operations), so a silent line and a
/// shown one cost the measurement the same.
final class ProgressLine: Sendable {
    private struct Phase: Sendable {
        var label: String
        var total: Int
        var unit: String
        var start: UInt64
    }

    let isShown: Bool
    private let done = Atomic<Int>(0)
    private let phase = Mutex<Phase?>(nil)
    private let stopped = Atomic<Bool>(false)

    /// How many operations the loops report at a time.
    static let stride = 1024

    init(shown: Bool) {
        isShown = shown
        guard shown else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.2)
                draw()
            }
        }
        thread.name = "kache-bench.progress"
        thread.start()
    }

    /// Whether this process should show it: stderr is a terminal and `--quiet` was not given.
    static func shouldShow(quiet: Bool) -> Bool {
        !quiet && isatty(STDERR_FILENO) == 1
    }

    /// Starts a timed loop of `total` operations, counted in `unit` ("gets", "sets", "ops").
    func begin(_ label: String, total: Int, unit: String) {
        done.store(0, ordering: .relaxed)
        phase.withLock { $0 = Phase(label: label, total: max(total, 1), unit: unit, start: MonotonicClock.now()) }
    }

    /// Counts `count` operations done (the loops call it every ``stride`` operations).
    @inline(__always)
    func advance(by count: Int) {
        done.add(count, ordering: .relaxed)
    }

    /// Ends the loop and clears the line.
    func end() {
        phase.withLock { $0 = nil }
        if isShown { write("\r\u{1B}[K") }
    }

    /// Stops the drawing thread.
    func stop() {
        end()
        stopped.store(true, ordering: .relaxed)
    }

    private func draw() {
        guard let current = phase.withLock({ $0 }) else { return }
        let count = done.load(ordering: .relaxed)
        let seconds = MonotonicClock.seconds(from: current.start, to: MonotonicClock.now())
        let percent = min(100, count * 100 / current.total)
        let rate = seconds > 0 ? Format.rate(Double(count) / seconds) : "–"
        write("\r\u{1B}[K\(current.label) · \(percent)% · \(rate) \(current.unit)/s")
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
