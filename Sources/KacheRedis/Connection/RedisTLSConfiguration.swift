import NIOSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS to every node (Redis's `tls-port`), through swift-nio-ssl.
///
/// The nodes' certificates must chain to a CA of `caBundlePath`, and by
/// default name the node: its address's host, which may be an IP address
/// (checked against the certificate's IP SANs), or `serverName` when set.
/// A node that fails either check is refused with
/// ``RedisClientError/certificateNotTrusted(_:reason:)`` or
/// ``RedisClientError/serverNameMismatch(_:expected:)``.
///
/// The files are read once, here: a missing or unreadable file is an error
/// now, not at the first connect.
///
/// ```swift
/// let tls = try RedisTLSConfiguration(caBundlePath: "/etc/redis/ca.crt", serverName: "redis.internal")
/// let configuration = RedisClusterConfiguration(seeds: seeds, credentials: credentials, tls: tls)
/// ```
public struct RedisTLSConfiguration: Sendable {
    /// How a node's certificate is checked.
    public enum Verification: Sendable, Equatable {
        /// The chain ends at a trusted CA, and the certificate names the node.
        case full
        /// The chain ends at a trusted CA; any name is accepted.
        case chainOnly
        /// Nothing is checked: anyone on the path can read and change the traffic.
        case none
    }

    /// The PEM file of the CAs a node's certificate must chain to.
    public let caBundlePath: String
    /// The PEM file of the certificate this client presents (for `tls-auth-clients yes`).
    public let clientCertificatePath: String?
    /// The PEM file of that certificate's private key.
    public let clientPrivateKeyPath: String?
    /// The name every node's certificate must carry, and the SNI sent; nil
    /// for each node's own host. Set it when nodes are addressed by IP but
    /// certified by name.
    public let serverName: String?
    /// How a node's certificate is checked.
    public let verification: Verification
    /// Built once from the files; each connection's TLS handler shares it.
    let context: NIOSSLContext

    /// Reads the CA bundle (and the client certificate and key, when given).
    /// - Throws: ``RedisClientError/tlsConfigurationInvalid(reason:)`` when a
    ///   file is missing or holds no usable certificate or key, or only one of
    ///   `clientCertificatePath` and `clientPrivateKeyPath` is given.
    public init(
        caBundlePath: String, clientCertificatePath: String? = nil, clientPrivateKeyPath: String? = nil,
        serverName: String? = nil, verification: Verification = .full
    ) throws(RedisClientError) {
        self.caBundlePath = caBundlePath
        self.clientCertificatePath = clientCertificatePath
        self.clientPrivateKeyPath = clientPrivateKeyPath
        self.serverName = serverName
        self.verification = verification
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = switch verification {
        case .full: .fullVerification
        case .chainOnly: .noHostnameVerification
        case .none: .none
        }
        configuration.trustRoots = .certificates(try Self.certificates(at: caBundlePath, what: "CA bundle"))
        switch (clientCertificatePath, clientPrivateKeyPath) {
        case (nil, nil):
            break
        case let (certificate?, key?):
            configuration.certificateChain = try Self.certificates(at: certificate, what: "client certificate").map { .certificate($0) }
            do {
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            } catch {
                throw .tlsConfigurationInvalid(reason: "the client key \(key) can't be read as a PEM private key: \(error)")
            }
        default:
            throw .tlsConfigurationInvalid(reason: "a client certificate needs both clientCertificatePath and clientPrivateKeyPath")
        }
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .tlsConfigurationInvalid(reason: "swift-nio-ssl refused the configuration: \(error)")
        }
    }

    private static func certificates(at path: String, what: String) throws(RedisClientError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw .tlsConfigurationInvalid(reason: "the \(what) \(path) can't be read as PEM certificates: \(error)")
        }
        guard !certificates.isEmpty else { throw .tlsConfigurationInvalid(reason: "the \(what) \(path) holds no certificate") }
        return certificates
    }

    /// The name a connection to `address` sends as SNI and checks the
    /// certificate against; nil for an IP address, which swift-nio-ssl checks
    /// against the peer's address instead (SNI can't carry one).
    func expectedServerName(for address: NodeAddress) -> String? {
        let name = serverName ?? address.host
        return name.isIPAddress ? nil : name
    }

    /// What a mismatch names as expected: the server name, or the address's host.
    func checkedName(for address: NodeAddress) -> String { serverName ?? address.host }
}

extension RedisTLSConfiguration: CustomStringConvertible, CustomReflectable {
    /// The files and the checks; no key material.
    public var description: String {
        "RedisTLSConfiguration(caBundlePath: \(caBundlePath), clientCertificatePath: \(clientCertificatePath ?? "nil"), "
            + "serverName: \(serverName ?? "nil"), verification: \(verification))"
    }

    /// The files and the checks, without the loaded context (which holds the private key).
    public var customMirror: Mirror {
        Mirror(self, children: [
            "caBundlePath": caBundlePath, "clientCertificatePath": clientCertificatePath as Any,
            "clientPrivateKeyPath": clientPrivateKeyPath as Any, "serverName": serverName as Any, "verification": verification,
        ], displayStyle: .struct)
    }
}

extension String {
    /// Whether the text is an IPv4 or IPv6 address (not a name).
    var isIPAddress: Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return withCString { inet_pton(AF_INET, $0, &v4) == 1 || inet_pton(AF_INET6, $0, &v6) == 1 }
    }
}
