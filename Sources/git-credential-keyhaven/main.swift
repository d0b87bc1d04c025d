// git-credential-keyhaven: git's credential helper over the keychain (as git-credential-osxkeychain).
//   git config --global credential.helper keyhaven
#if canImport(Glibc)
import Glibc
#endif
import KeyhavenCLI

exit(GitCredential.main(arguments: Array(CommandLine.arguments.dropFirst())))
