import Foundation
import KacheRedis
import KacheTestSupport

/// A CA, a server certificate and a client certificate that a TLS test makes
/// for itself with openssl (`scripts/redis-cluster.sh certs`), in a
/// temporary directory removed with the value.
final class TestCertificates: Sendable {
    private let directory: TemporaryDirectory
    /// The directory `redis-cluster.sh start --tls` takes.
    var path: String { directory.path }
    var caBundle: String { path + "/ca.crt" }
    var clientCertificate: String { path + "/client.crt" }
    var clientKey: String { path + "/client.key" }
    /// A client configuration trusting this CA and presenting the client certificate.
    let configuration: RedisTLSConfiguration

    /// The server name every test certificate carries beside 127.0.0.1.
    static let serverName = "redis.kache.test"

    private init(directory: TemporaryDirectory, configuration: RedisTLSConfiguration) {
        self.directory = directory
        self.configuration = configuration
    }

    /// Makes a new CA (or uses `signer`'s) and certificates; the server's
    /// carries `subjectAlternativeNames`.
    static func make(
        subjectAlternativeNames: String = "DNS:\(serverName),IP:127.0.0.1", signedBy signer: TestCertificates? = nil,
        label: String = #function
    ) async throws -> TestCertificates {
        let directory = TemporaryDirectory(label)
        var command = ["bash", LiveCluster.script, "certs", directory.path, "--san", subjectAlternativeNames]
        if let signer { command += ["--ca", signer.path] }
        let made = try await ChildProcess.run(command, timeout: .seconds(60))
        guard made.status == 0 else { throw CertificatesNotMade(description: made.description) }
        let configuration = try RedisTLSConfiguration(
            caBundlePath: directory.path + "/ca.crt",
            clientCertificatePath: directory.path + "/client.crt", clientPrivateKeyPath: directory.path + "/client.key"
        )
        return TestCertificates(directory: directory, configuration: configuration)
    }

    /// A client configuration trusting this CA, presenting the client certificate, expecting `serverName`.
    func configuration(serverName: String?) throws -> RedisTLSConfiguration {
        try RedisTLSConfiguration(caBundlePath: caBundle, clientCertificatePath: clientCertificate, clientPrivateKeyPath: clientKey, serverName: serverName)
    }
}

struct CertificatesNotMade: Error, CustomStringConvertible {
    let description: String
}
