import NIOSSL

/// The certificate chain and private key the server terminates TLS with (`--tls-certificate`,
/// `--tls-key`), for hosts without a TLS proxy. Read once at start: a renewed certificate is served
/// after a restart.
public struct TLSFiles: Sendable, Hashable {
    public var certificate: String
    public var key: String

    /// Both paths, or neither (`nil`); one without the other is a ``SettingError``.
    init?(certificate: String?, key: String?) throws {
        switch (certificate, key) {
        case (nil, nil): return nil
        case (let certificate?, let key?):
            self.certificate = certificate
            self.key = key
        case (nil, _):
            throw SettingError(key: "tipsync.tls.certificate", "--tls-key needs --tls-certificate too")
        case (_, nil):
            throw SettingError(key: "tipsync.tls.key", "--tls-certificate needs --tls-key too")
        }
    }

    /// The server's TLS configuration from the two files: TLS 1.2 and later, HTTP/1.1 by ALPN.
    /// - Throws: ``SettingError`` naming the setting and the file when one cannot be read or parsed.
    func serverConfiguration() throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw SettingError(
                key: "tipsync.tls.certificate", "cannot read a PEM certificate chain from \(certificate): \(error)")
        }
        guard !chain.isEmpty else {
            throw SettingError(key: "tipsync.tls.certificate", "\(certificate) holds no PEM certificate")
        }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw SettingError(key: "tipsync.tls.key", "cannot read a PEM private key from \(key): \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        return configuration
    }
}
