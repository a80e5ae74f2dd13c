import Synchronization
import Testing
@testable import KacheRedis

/// The replies of a pipeline's batches on several nodes, awaited together.
@Suite struct PendingRepliesTests {
    private func reply(_ text: String) -> PendingReplies.Outcome { .success([.simpleString(text)]) }

    /// Parts complete in any order; the task awaiting them is resumed only
    /// when the last one is in, with the outcomes in the order of the parts.
    @Test(.timeLimit(.minutes(1))) func theAwaitingTaskIsResumedByTheLastPartWithEveryPartInOrder() async throws {
        let replies = PendingReplies(parts: 3)
        let returned = Atomic(false)
        let waiter = Task {
            defer { returned.store(true, ordering: .sequentiallyConsistent) }
            return await replies.values()
        }
        while !replies.isAwaited { try await Task.sleep(for: .milliseconds(1)) }
        replies.complete(part: 2, with: reply("two"))
        replies.complete(part: 0, with: .failure(.connectionClosed(NodeAddress(host: "127.0.0.1", port: 1))))
        try await Task.sleep(for: .milliseconds(50))
        let returnedEarly = returned.load(ordering: .sequentiallyConsistent)
        #expect(!returnedEarly, "resumed before its last part was complete")
        replies.complete(part: 1, with: reply("one"))
        let outcomes = await waiter.value
        #expect(outcomes.count == 3)
        guard case .failure(.connectionClosed) = outcomes[0] else {
            Issue.record("part 0: \(outcomes[0]), not its connection closing")
            return
        }
        #expect(try outcomes[1].get() == [.simpleString("one")])
        #expect(try outcomes[2].get() == [.simpleString("two")])
    }

    /// Awaited after every part is complete, the outcomes are there at once.
    @Test func repliesCompleteBeforeTheyAreAwaitedAreReturnedAtOnce() async throws {
        let replies = PendingReplies(parts: 2)
        replies.complete(part: 1, with: reply("b"))
        replies.complete(part: 0, with: reply("a"))
        #expect(try await replies.values().map { try $0.get() } == [[.simpleString("a")], [.simpleString("b")]])
    }

    /// A part failed by the handler after its replies came (the channel
    /// closing) keeps the replies: a part is completed once.
    @Test func aPartCompletedTwiceKeepsItsFirstOutcome() async throws {
        let replies = PendingReplies(parts: 1)
        replies.complete(part: 0, with: reply("first"))
        replies.complete(part: 0, with: .failure(.shutDown))
        #expect(try await replies.values()[0].get() == [.simpleString("first")])
    }
}
