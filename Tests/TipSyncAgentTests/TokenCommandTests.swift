import Foundation
import Testing

@testable import TipSyncAgent

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
