import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a file could not be read or written, in the plain words an error line ends with ("no such
/// file or directory", "permission denied", "it is a directory") instead of Foundation's error
/// domains and codes.
enum FileProblem {
    /// The words for what Foundation (or a decoder) threw.
    static func words(_ error: any Error) -> String {
        if let error = error as? DecodingError { return words(error) }
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error,
            (underlying as NSError).domain == NSPOSIXErrorDomain
        {
            return words(errno: Int32((underlying as NSError).code))
        }
        if error.domain == NSPOSIXErrorDomain { return words(errno: Int32(error.code)) }
        if error.domain == NSCocoaErrorDomain {
            switch error.code {
            case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue:
                return "no such file or directory"
            case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue:
                return "permission denied"
            case CocoaError.fileWriteFileExists.rawValue: return "it already exists"
            case CocoaError.fileWriteOutOfSpace.rawValue: return "no space left on the device"
            case CocoaError.fileWriteVolumeReadOnly.rawValue: return "read-only file system"
            default: break
            }
        }
        return String(describing: error).replacingOccurrences(of: "\n", with: " ")
    }

    /// `strerror`'s words, starting in lower case: `permission denied`.
    static func words(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// What a JSON file's decoder found wrong, without Swift's type names.
    static func words(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted: "not valid JSON"
        case .keyNotFound(let key, _): "'\(key.stringValue)' is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        @unknown default: "not what was expected"
        }
    }

    /// Why `path`, which could not be read, cannot be: found by looking at it now.
    static func whyUnreadable(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return "no such file or directory"
        }
        if isDirectory.boolValue { return "it is a directory" }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return words(errno: errno) }
        close(descriptor)
        return "it could not be read"
    }
}
