import Foundation
import Testing

@testable import TipSyncAgent

#if canImport(Glibc)
    import Glibc
#endif

/// `tipsync-agent init --token-command CMD`: what the command prints is the credential.
@Suite struct TokenCommandTests {
    @Test func theCommandsOutputIsTheToken() async throws {
        let token = try await TokenCommand.run("printf 'eyJ.abc.def\\n'")
        #expect(token == "eyJ.abc.def")
    }

    @Test func aFailingOrSilentCommandIsAClearError() async throws {
        await #expect(throws: TokenCommand.Failure.self) { try await TokenCommand.run("exit 3") }
        await #expect(throws: TokenCommand.Failure.self) { try await TokenCommand.run("true") }
        await #expect(throws: TokenCommand.Failure.self) { try await TokenCommand.run("printf 'a\\nb\\n'") }
        let killed = await #expect(throws: TokenCommand.Failure.self) { try await TokenCommand.run("kill -9 $$") }
        #expect(killed?.description == "the token command 'kill -9 $$' was ended by signal 9")
    }

    /// The command gets the agent's standard error and nothing else of it: not its sockets, which
    /// SwiftNIO does not make close-on-exec (a helper the command leaves running would hold them).
    @Test func theCommandInheritsNoSocketOfTheAgent() async throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket > 2)
        defer { close(socket) }
        #expect(fcntl(socket, F_GETFD) & FD_CLOEXEC == 0)
        let answer = try await TokenCommand.run(
            "if [ -e /proc/self/fd/\(socket) ]; then echo inherited; else echo closed; fi; [ -e /proc/self/fd/2 ]")
        #expect(answer == "closed")
    }

    /// The command is done when it exits, not when its output closes: what it left running in the
    /// background may hold that open.
    @Test func aCommandIsDoneWhenItExitsEvenIfItsOutputStaysOpen() async throws {
        let token = try await TokenCommand.run("printf 'eyJ.abc.def'; sleep 30 2>/dev/null &")
        #expect(token == "eyJ.abc.def")
    }

    @Test func anAgentWithATokenCommandAsksItForCredentials() throws {
        let configuration = AgentConfiguration(
            server: URL(string: "http://127.0.0.1:1")!, token: "", device: "phone", tokenCommand: "echo t")
        let decoded = try JSONDecoder().decode(
            AgentConfiguration.self, from: try JSONEncoder().encode(configuration))
        #expect(decoded.tokenCommand == "echo t")
        // Stores written before the option existed still load.
        let old = try JSONDecoder().decode(
            AgentConfiguration.self, from: Data(#"{"server":"http://h:1","token":"ts_a","device":"d"}"#.utf8))
        #expect(old.tokenCommand == nil && old.token == "ts_a")
    }
}
