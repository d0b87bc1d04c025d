// The porting guide's one file per target: on Apple platforms `import Foundation` brings Security
// along; on Linux this line does it for every file of the target.
@_exported import Security
