import Foundation

/// The parts of `--json` the tests read, decoded on their own terms (not with
/// the tool's types), so that a change of the format shows here.
struct BenchJSON: Decodable {
    struct Summary: Decodable {
        var median: Double
        var min: Double
        var max: Double
    }

    struct Comparison: Decodable {
        var baseline: String
        var samples: [Double]
        var summary: Summary?
        var ratios: [Double]
        var ratio: Summary?
    }

    struct Figure: Decodable {
        var name: String
        var unit: String
        var samples: [Double]
        var summary: Summary?
        var comparisons: [Comparison]
    }

    struct Result: Decodable {
        var workload: String
        var variant: String?
        var durability: String
        var threads: Int
        var memoryBudget: Int
        var diskBudget: Int?
        var figures: [Figure]
        var notes: [String]

        func figure(_ name: String) -> Figure? { figures.first { $0.name == name } }
    }

    struct Machine: Decodable {
        var cores: Int
        var operatingSystem: String
        var kernel: String
        var swiftVersion: String
        var gitCommit: String?
        var fileSystem: String
    }

    struct Options: Decodable {
        var runs: Int
        var quick: Bool
        var directory: String
        var directoryKept: Bool
        var peers: Bool?
    }

    struct Target: Decodable {
        var target: String
        var met: Bool
    }

    var tool: String
    var machine: Machine
    var options: Options
    var results: [Result]
    var targets: [Target]

    static func read(_ url: URL) throws -> BenchJSON {
        try JSONDecoder().decode(BenchJSON.self, from: Data(contentsOf: url))
    }

    func results(workload: String) -> [Result] { results.filter { $0.workload == workload } }
}
