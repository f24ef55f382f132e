/// Which TipSync this is: the release every product of the package shares (`tipsync-server
/// --version`, `tipsync-agent --version`, `/health`, `/metrics`'s `tipsync_build_info`, the web
/// client's package.json) and the revision of protocol.md it implements. Written here once; a test
/// holds protocol.md's latest revision and the web client's version to it.
public enum TipSyncVersion {
    /// The release.
    public static let release = "0.19.0"
    /// The latest revision of protocol.md this implements (the wire version is its major number).
    public static let protocolRevision = "2.10"

    /// What `--version` prints.
    public static var description: String { "\(release) (protocol \(protocolRevision))" }
}
