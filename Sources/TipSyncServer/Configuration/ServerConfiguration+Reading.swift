package import Configuration
import Foundation
import Logging
import TipSyncDeviceService
import TipSyncServerBasics
import TipSyncStorage

extension ServerConfiguration {
    /// Reads every setting from `config` (`tipsync-server serve` passes flags, then the environment,
    /// then `--config-file`; see ``load(arguments:environment:)``). This initializer is the one place
    /// a setting's key, unit and default are written.
    ///
    /// - Configuration keys (flag / environment variable from the key, see ``Setting``):
    ///   - `http.host` (string, default `127.0.0.1`), `http.port` (int, default 8080)
    ///   - `tipsync.database` (string, default `sqlite:./tipsync-data/server.sqlite`)
    ///   - `log.level` (string, default `info`)
    ///   - `tipsync.maxBodyBytes`, `tipsync.maxBatch`, `tipsync.maxPullLimit` (int)
    ///   - `tipsync.maxClockSkew`, `tipsync.heartbeat`, `tipsync.liveStallTimeout`, `tipsync.maxWait`,
    ///     `tipsync.requestHeadTimeout`, `tipsync.requestBodyTimeout`, `tipsync.memoryReleaseInterval`
    ///     (seconds); `tipsync.maxLiveStreamsPerDevice` (int)
    ///   - `tipsync.longPollGather` (milliseconds), `tipsync.maxConnections` (int, optional),
    ///     `tipsync.requestsInFlight` (int)
    ///   - `tipsync.rate.requests`, `tipsync.rate.changes`, `tipsync.rate.bodyBytes`,
    ///     `tipsync.rate.readBytes`, `tipsync.rate.failedSignIns` and each `….burst` (numbers),
    ///     `tipsync.autoCompactAfter` (int)
    ///   - `tipsync.console` (bool), `tipsync.corsOrigins`, `tipsync.trustedProxies` (lists)
    ///   - `tipsync.jwt.secretFile`, `tipsync.jwt.jwksFile`, `tipsync.jwt.issuer`, `tipsync.jwt.audience`
    ///   - `tipsync.configFile` (string, optional)
    ///
    /// - Throws: ``SettingError`` naming the flag and environment variable of a value that is not of
    ///   its setting's type or range, or of two settings that contradict each other.
    package init(reading config: ConfigReader) throws {
        var settings = SettingReader(config)
        try self.init(from: &settings)
    }

    /// Every setting the server reads, in the order ``init(reading:)`` reads them.
    package static var settings: [Setting] {
        var reader = SettingReader(ConfigReader(provider: InMemoryProvider(values: [:])))
        _ = try? Self(from: &reader)
        return reader.settings
    }

    private init(from settings: inout SettingReader) throws {
        configFile = Self.readConfigFile(&settings)
        httpHost = settings.string("http.host", default: "127.0.0.1", "Address to bind (0.0.0.0 in containers).")
        httpPort = try settings.int("http.port", default: 8080, maximum: 65535, "Port to bind.")
        let certificate = settings.optionalString(
            "tipsync.tls.certificate", whenUnset: "none (plain HTTP)",
            "PEM file of the server's certificate chain (e.g. certbot's fullchain.pem): serve HTTPS on --http-port.")
        let key = settings.optionalString(
            "tipsync.tls.key", whenUnset: "none",
            "PEM file of the certificate's private key (e.g. certbot's privkey.pem); with --tls-certificate.")
        tls = try TLSFiles(certificate: certificate, key: key)
        database = try settings.parsed(
            "tipsync.database", default: "sqlite:./tipsync-data/server.sqlite",
            "sqlite:PATH (one machine) or postgres://user:password@host:port/db[?sslmode=disable|prefer|require]."
        ) { try DatabaseLocation($0) }
        databaseWait = try settings.seconds(
            "tipsync.databaseWait", default: .seconds(60),
            "How long to wait at start for PostgreSQL to answer, retrying with a logged backoff, before giving up.")
        logLevel = try settings.parsed(
            "log.level", default: "info",
            "trace, debug, info, notice, warning, error or critical (no level ever logs a token)."
        ) { Logger.Level(rawValue: $0) }
        logFormat = try settings.parsed(
            "log.format", default: "text",
            "text (one line per record) or json (one JSON object per line: time, level, label, message, metadata)."
        ) { LogFormat(rawValue: $0) }
        accessLog = try settings.bool(
            "log.access", default: false,
            "Log every request at info: method, path (names and secrets redacted), status, duration.")
        metricsToken = settings.optionalString(
            "tipsync.metricsToken", whenUnset: "none (open)",
            "A token /metrics then requires as Authorization: Bearer (Prometheus: authorization.credentials).")
        maxBodyBytes = try settings.int(
            "tipsync.maxBodyBytes", default: 4 * 1024 * 1024, unit: "bytes", minimum: 1024,
            "Larger request bodies get 413 body_too_large.")
        maxBatch = try settings.int(
            "tipsync.maxBatch", default: 1000, minimum: 1, "More changes per push get 413 batch_too_large.")
        maxPullLimit = try settings.int(
            "tipsync.maxPullLimit", default: 5000, minimum: 1, "The largest limit a pull may ask for.")
        maxClockSkew = try settings.seconds(
            "tipsync.maxClockSkew", default: .seconds(300),
            "How far ahead of the server clock a stamp may be (422 clock_skew), and a display's lastDisplayed (422 invalid_change)."
        )
        heartbeat = try settings.seconds(
            "tipsync.heartbeat", default: .seconds(15), minimum: .milliseconds(10),
            "Interval of heartbeats on /v1/live streams.")
        liveStallTimeout = try settings.seconds(
            "tipsync.liveStallTimeout", default: .seconds(30), minimum: .milliseconds(1),
            "A /v1/live stream whose client has not read what was written to it within this time is ended (the client reconnects)."
        )
        maxLiveStreamsPerDevice = try settings.int(
            "tipsync.maxLiveStreamsPerDevice", default: 4, minimum: 1,
            "Open /v1/live streams per device; opening one more ends the device's oldest.")
        maxWait = try settings.seconds(
            "tipsync.maxWait", default: .seconds(60), "The longest wait a long-poll pull may ask for.")
        longPollGather = try settings.milliseconds(
            "tipsync.longPollGather", default: .milliseconds(10),
            "How long a long-poll that finds changes already waiting holds its answer to gather more (0: answers at once)."
        )
        requestHeadTimeout = try settings.seconds(
            "tipsync.requestHeadTimeout", default: .seconds(10), minimum: .milliseconds(1),
            "Time a connection has to deliver a complete request head, after opening or after its previous response.")
        requestBodyTimeout = try settings.seconds(
            "tipsync.requestBodyTimeout", default: .seconds(30), minimum: .milliseconds(1),
            "Time a request's body has to arrive after its head.")
        maxConnections = try settings.optionalInt(
            "tipsync.maxConnections", whenUnset: "open-file limit − 256 (at least 64)", minimum: 1,
            "Open connections beyond this wait in the kernel backlog.")
        requestsInFlight = try settings.int(
            "tipsync.requestsInFlight", default: 256, minimum: 1,
            "Requests served at once; more wait their turn, first come first served, holding only their connection (a long-poll waiting for news does not count)."
        )
        listenBacklog = try settings.int(
            "tipsync.listenBacklog", default: 4096, minimum: 1,
            "Connections the kernel holds until the server accepts them (capped by net.core.somaxconn). When it is full, a new connection's SYN is dropped and its client's kernel retries after 1, 3, 7, 15 … s: a reconnect storm's devices would wait minutes."
        )
        requestRate = RateLimit(
            perSecond: try settings.number(
                "tipsync.rate.requests", default: 20, unit: "per second",
                "Requests per second per device, on average (0: no limit)."),
            burst: try settings.number(
                "tipsync.rate.requests.burst", default: 200, "Requests per device at once."))
        changeRate = RateLimit(
            perSecond: try settings.number(
                "tipsync.rate.changes", default: 1000, unit: "per second",
                "Pushed changes per second per device, on average (0: no limit)."),
            burst: try settings.number(
                "tipsync.rate.changes.burst", default: 10_000,
                "Pushed changes per device at once; at least --max-batch."))
        if changeRate.perSecond > 0, changeRate.burst < Double(maxBatch) {
            throw SettingError(
                key: "tipsync.rate.changes.burst", "must be at least the largest batch, --max-batch (\(maxBatch))")
        }
        rateRefusalDelay = try settings.seconds(
            "tipsync.rate.refusalDelay", default: .seconds(1),
            "How long a request refused for its device's request rate waits before its 429 is sent (0: at once).")
        bodyByteRate = RateLimit(
            perSecond: try settings.number(
                "tipsync.rate.bodyBytes", default: 1_048_576, unit: "bytes per second",
                "Decoded push-body bytes per second per device, on average: what its pushes cost to parse (0: no limit)."
            ),
            burst: try settings.number(
                "tipsync.rate.bodyBytes.burst", default: 8_388_608, unit: "bytes",
                "Decoded push-body bytes per device at once; at least --max-body-bytes."))
        if bodyByteRate.perSecond > 0, bodyByteRate.burst < Double(maxBodyBytes) {
            throw SettingError(
                key: "tipsync.rate.bodyBytes.burst",
                "must be at least the largest body, --max-body-bytes (\(maxBodyBytes))")
        }
        readByteRate = RateLimit(
            perSecond: try settings.number(
                "tipsync.rate.readBytes", default: 4_194_304, unit: "bytes per second",
                "Change text per second per device read from the log for its pulls and live streams, on average (0: no limit)."
            ),
            burst: try settings.number(
                "tipsync.rate.readBytes.burst", default: 33_554_432, unit: "bytes",
                "Change text per device read from the log at once."))
        failedSignInRate = RateLimit(
            perSecond: try settings.number(
                "tipsync.rate.failedSignIns", default: 0.2, unit: "per second",
                "Refused sign-ins per second per client address, on average (0: no limit)."),
            burst: try settings.number(
                "tipsync.rate.failedSignIns.burst", default: 20, "Refused sign-ins per client address at once."))
        autoCompactAfter = try settings.int(
            "tipsync.autoCompactAfter", default: 10_000,
            "Compact an account in the background once its log grew by this many entries (0: never).")
        memoryReleaseInterval = try settings.seconds(
            "tipsync.memoryReleaseInterval", default: .seconds(30),
            "Interval of counted requests: when one falls to a tenth of the busiest, cached and freed memory goes back to the system (0: never)."
        )
        console = try settings.bool(
            "tipsync.console", default: false, "Serve the operator console at /console, logged in with an admin key.")
        corsOrigins = Set(
            settings.list(
                "tipsync.corsOrigins", whenUnset: "none",
                "Comma-separated web origins whose pages may call /v1 (CORS), e.g. https://app.example.com, or *."))
        trustedProxies = Set(
            settings.list(
                "tipsync.trustedProxies", whenUnset: "none",
                "Comma-separated proxy addresses whose X-Forwarded-For names the client (for the sign-in throttle), or 'private' for loopback and private networks."
            ))
        // An origin is exactly what a browser sends (scheme://host[:port]), or *: anything else could
        // never match, and was accepted silently.
        for origin in corsOrigins.sorted() where origin != "*" && !Self.isOrigin(origin) {
            throw SettingError(
                key: "tipsync.corsOrigins",
                "'\(origin)' is not an origin: scheme://host[:port] with no path, e.g. https://app.example.com, or *")
        }
        for proxy in trustedProxies.sorted() where proxy != "private" && !Self.isIPAddress(proxy) {
            throw SettingError(
                key: "tipsync.trustedProxies", "'\(proxy)' is not an IP address or 'private'")
        }
        jwt = JWTSignIn.Configuration(
            secretFile: settings.optionalString(
                "tipsync.jwt.secretFile", whenUnset: "none", "File holding the HS256 secret for JWT device sign-in."),
            jwksFile: settings.optionalString(
                "tipsync.jwt.jwksFile", whenUnset: "none",
                "File holding a JWKS with the identity provider's public keys; re-read on SIGHUP or change."),
            issuer: settings.optionalString("tipsync.jwt.issuer", whenUnset: "any", "The iss every JWT must carry."),
            audience: settings.optionalString(
                "tipsync.jwt.audience", whenUnset: "any", "A value every JWT's aud must contain."))
    }

    /// Whether `text` is a web origin as browsers send it: `http` or `https`, `://`, a host and an
    /// optional port, nothing after.
    static func isOrigin(_ text: String) -> Bool {
        guard let separator = text.range(of: "://") else { return false }
        let scheme = text[..<separator.lowerBound]
        let authority = text[separator.upperBound...]
        guard scheme == "http" || scheme == "https", !authority.isEmpty else { return false }
        return !authority.contains(where: { "/?#@ \t".contains($0) })
    }

    /// Whether `text` is an IPv4 or IPv6 address literal.
    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// The one setting read before the others, as it adds a source for them.
    static func readConfigFile(_ settings: inout SettingReader) -> String? {
        settings.optionalString(
            "tipsync.configFile", whenUnset: "none",
            "An environment file (KEY=VALUE lines, as deploy/tipsync-server.env) read after flags and the environment.")
    }
}
