import Configuration
import SystemPackage
import TipSyncServerBasics
import TipSyncStorage

extension ServerConfiguration {
    /// The configuration `tipsync-server` runs with. Each setting comes from the first of:
    /// 1. its flag in `arguments` (`--max-batch 500`, `--max-batch=500`; `--console` alone is on),
    /// 2. its variable in `environment` (`TIPSYNC_MAX_BATCH=500`),
    /// 3. the environment file named by `--config-file` / `TIPSYNC_CONFIG_FILE` (`KEY=VALUE` lines,
    ///    `#` comments: the format of `deploy/tipsync-server.env`),
    /// 4. its default.
    ///
    /// - Throws: ``SettingError`` for a flag that names no setting, a value that does not fit its
    ///   setting, or a configuration file that cannot be read.
    package static func load(arguments: [String], environment: [String: String]) async throws -> ServerConfiguration {
        let flags = Set(settings.map(\.flag))
        for argument in arguments where argument.hasPrefix("-") && Double(argument) == nil {
            let name = String(argument.prefix { $0 != "=" })
            guard flags.contains(name) else {
                throw SettingError("unknown option '\(name)' (tipsync-server serve --help lists the settings)")
            }
        }
        // Flags are the keys without their leading `tipsync` (`--max-batch`, not `--tipsync-max-batch`).
        let commandLine = CommandLineArgumentsProvider(arguments: ["tipsync-server"] + arguments).mapKeys { key in
            AbsoluteConfigKey(key.components.first == "tipsync" ? Array(key.components.dropFirst()) : key.components)
        }
        let variables = EnvironmentVariablesProvider(environmentVariables: environment)
        let early = ConfigReader(providers: [commandLine, variables])
        var earlySettings = SettingReader(early)
        guard let file = readConfigFile(&earlySettings) else {
            return try ServerConfiguration(reading: early)
        }
        let contents: EnvironmentVariablesProvider
        do {
            contents = try await EnvironmentVariablesProvider(environmentFilePath: .init(file))
        } catch {
            throw SettingError(key: "tipsync.configFile", "cannot read '\(file)': \(error)")
        }
        return try ServerConfiguration(reading: ConfigReader(providers: [commandLine, variables, contents]))
    }
}
