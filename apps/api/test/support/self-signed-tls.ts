/**
 * A self-signed certificate for `nas.test` (and its key), for tests only: an HTTPS loopback
 * server whose certificate no trust store accepts, to prove url_fetch verifies TLS against
 * the URL's host name and sends it as SNI. Generated with:
 * openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 -subj /CN=nas.test -addext subjectAltName=DNS:nas.test
 */
export const NAS_TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBkzCCATigAwIBAgIUA3Fpn4oJDEanmLJLZ8VZT+bLgxIwCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIbmFzLnRlc3QwIBcNMjYxMTI1MTYxOTAzWhgPMjEyNjExMDEx
NjE5MDNaMBMxETAPBgNVBAMMCG5hcy50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEqHD7K0dv6TC1ya81M6vPrskhOMlYhr1z4lO+V0dnWpq9CAHbw5dLw2CB
6w7ACpZClgltsagMOgfLyW1MEfLSgKNoMGYwHQYDVR0OBBYEFNeSr1BnO0GzyLzW
7HUXT2rn9+lJMB8GA1UdIwQYMBaAFNeSr1BnO0GzyLzW7HUXT2rn9+lJMA8GA1Ud
EwEB/wQFMAMBAf8wEwYDVR0RBAwwCoIIbmFzLnRlc3QwCgYIKoZIzj0EAwIDSQAw
RgIhAMacYiLaW4dp7NoRMQSxPPGHiePNlQ4n+y2PIEcFCAj6AiEA7LCUdsnTuIqP
MAMK7upwTbx39KSWU6ePcfapddtBVTQ=
-----END CERTIFICATE-----
`;

export const NAS_TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPv7mQcnrzLnxBhum
bbgqSRSAVv1LUAtU6YHRmfGx1cahRANCAASocPsrR2/pMLXJrzUzq8+uySE4yViG
vXPiU75XR2damr0IAdvDl0vDYIHrDsAKlkKWCW2xqAw6B8vJbUwR8tKA
-----END PRIVATE KEY-----
`;
