import Foundation

/// A pinentry that answers every prompt with OK (Allow, for the agent's questions), types the text
/// of `FOLDER/pin` at GETPIN (empty without it), and logs the display it was started on
/// (`DISPLAY=...`) and everything else it was told to `FOLDER/pinentry.log`.
public enum ScriptedPinentry {
    /// Writes it as `FOLDER/pinentry` (0700) and returns its path, for `KEYHAVEN_PINENTRY`.
    public static func write(in folder: String) throws -> String {
        let script = """
            #!/bin/sh
            echo "DISPLAY=${DISPLAY-}" >> '\(folder)/pinentry.log'
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              case "$line" in GETPIN*) echo "D $(cat '\(folder)/pin' 2>/dev/null)"; echo OK ;; BYE*) echo OK; exit 0 ;;
              *) echo "$line" >> '\(folder)/pinentry.log'; echo OK ;; esac
            done
            """
        let path = folder + "/pinentry"
        try ExecutableFile.write(script, to: path)
        return path
    }
}
