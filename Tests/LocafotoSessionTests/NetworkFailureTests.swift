import Glibc
import NIOCore
import Testing

@testable import LocafotoSession

/// Connection failures in a person's words (issue 42: a dropped connection showed
/// `read(descriptor:pointer:size:): Connection reset by peer) (errno: 104)`).
@Suite struct NetworkFailureTests {
    @Test func nioErrorsAreNamedByWhatHappened() {
        #expect(NetworkFailure(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")) == .closed)
        #expect(NetworkFailure(IOError(errnoCode: EPIPE, reason: "write")) == .closed)
        #expect(NetworkFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .refused)
        #expect(NetworkFailure(IOError(errnoCode: ETIMEDOUT, reason: "connect")) == .timedOut)
        #expect(NetworkFailure(IOError(errnoCode: EHOSTUNREACH, reason: "connect")) == .unreachable)
        #expect(NetworkFailure(ChannelError.ioOnClosedChannel) == .closed)
        #expect(NetworkFailure(ChannelError.eof) == .closed)
        #expect(NetworkFailure(ChannelError.connectTimeout(.seconds(3))) == .timedOut)
        #expect(NetworkFailure(IOError(errnoCode: EACCES, reason: "bind")) == .other("permission denied"))
        struct NotANetworkError: Error {}
        #expect(NetworkFailure(NotANetworkError()) == nil)
    }

    @Test func theWordsNameNoLibraryAndNoNumber() {
        let reset = IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        let said = NetworkFailure(reset)!.during("bob's agent")
        #expect(said == "bob's agent closed the connection")
        for failure: NetworkFailure in [.closed, .refused, .timedOut, .unreachable, .unresolved] {
            for text in [failure.connecting, failure.during("bob's agent")] {
                #expect(!text.contains("errno") && !text.contains("descriptor") && !text.contains("IOError"), "\(text)")
            }
        }
        #expect(NetworkFailure.reason(reset) == "the connection was reset")
    }

    @Test func aPortThatCannotBeListenedOnIsSaidWithWhatToDo() {
        let taken = IOError(errnoCode: EADDRINUSE, reason: "bind(descriptor:ptr:bytes:)")
        #expect(
            NetworkFailure.listening(taken, port: 47821, option: "`agent --web-port N`")
                == "port 47821 is taken by another program; stop it, or choose another port with `agent --web-port N`")
        struct Other: Error {}
        #expect(NetworkFailure.listening(Other(), port: 1, option: "x") == nil)
    }
}
