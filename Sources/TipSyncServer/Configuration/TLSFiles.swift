package import Foundation
package import NIOSSL
import TipSyncServerBasics
import TipSyncStorage

/// The certificate chain and private key the server terminates TLS with (`--tls-certificate`,
/// `--tls-key`), for hosts without a TLS proxy. Read once at start: a renewed certificate is served
/// after a restart.
package struct TLSFiles: Sendable, Hashable {
    package var certificate: String
    package var key: String

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
    package func serverConfiguration() throws -> TLSConfiguration {
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

    /// What the start log says of the served certificate (issue 73, item 7): the leaf's subject —
    /// its common name and DNS names — and when it expires.
    package struct Summary: Sendable, Hashable {
        package var subject: String
        package var expires: Date
    }

    /// The leaf certificate's ``Summary``.
    /// - Throws: ``SettingError`` naming the file when it cannot be read.
    package func summary() throws -> Summary {
        let leaf: NIOSSLCertificate
        do {
            guard let first = try NIOSSLCertificate.fromPEMFile(certificate).first else {
                throw SettingError(key: "tipsync.tls.certificate", "\(certificate) holds no PEM certificate")
            }
            leaf = first
        } catch let error as SettingError {
            throw error
        } catch {
            throw SettingError(
                key: "tipsync.tls.certificate", "cannot read a PEM certificate chain from \(certificate): \(error)")
        }
        var names: [String] = []
        for name in leaf.subjectName where name.type == .commonName { names.append("CN=" + name.value) }
        for name in leaf._subjectAlternativeNames() where name.nameType == .dnsName {
            names.append("DNS:" + String(decoding: name.contents, as: UTF8.self))
        }
        return Summary(
            subject: names.isEmpty ? "(no name)" : names.joined(separator: ", "),
            expires: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)))
    }
}
