# Drives Keychain Access through AT-SPI, as a screen reader or a test robot would: every control
# is found by its accessible name. Prints one line per step; exits 1 on the first failure.
import os, subprocess, sys, time
import pyatspi

SHOTS = os.environ["SHOTS"]
KH = os.environ["KH"]
FOLDER = os.environ["FOLDER"]

def shot(name):
    subprocess.run(["/usr/bin/import", "-window", "root", os.path.join(SHOTS, name + ".png")], check=False)

def fail(step):
    shot("failed-" + step)
    print("FAILED " + step, flush=True)
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        for j in range(app.childCount if app is not None else 0):
            top = app.getChildAtIndex(j)
            print("  window: " + top.getRoleName() + " " + repr(top.name), flush=True)
    sys.exit(1)

def first(node, matches):
    # The first node under `node` (itself included) that `matches`; nodes that vanish are skipped.
    try:
        if matches(node):
            return node
        for i in range(node.childCount):
            found = first(node.getChildAtIndex(i), matches)
            if found is not None:
                return found
    except Exception:
        pass
    return None

def every(node, matches, out=None):
    out = [] if out is None else out
    try:
        if matches(node):
            out.append(node)
        for i in range(node.childCount):
            every(node.getChildAtIndex(i), matches, out)
    except Exception:
        pass
    return out

def find(node, role, name):
    return first(node, lambda n: n.getRoleName() == role and n.name == name)

def find_role(node, role):
    return first(node, lambda n: n.getRoleName() == role)

def find_any(node, name):
    return first(node, lambda n: n.name == name)

def name_of(node):
    try:
        return node.name
    except Exception:
        return None

def named(node, role):
    # A row being rebuilt can be gone by the time its name is read (None): it names nothing.
    return [name for name in (name_of(n) for n in every(node, lambda n: n.getRoleName() == role)) if name is not None]

def texts(node, name):
    # The texts of the controls named `name` (a value label is named by its caption).
    return [text_of(n) for n in every(node, lambda n: n.name == name)]


def frame(title):
    # A window by its title, whatever role GTK gives it (a dialog's window is a "filler" to GTK 4.8).
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        try:
            for j in range(app.childCount if app is not None else 0):
                top = app.getChildAtIndex(j)
                if top.name == title:
                    return top
        except Exception:
            pass
    return None

def text_of(node):
    try:
        text = node.queryText()
        return text.getText(0, text.characterCount)
    except Exception:
        return name_of(node)

def press(name, window):
    button = wait("button " + name, lambda: find(window, "push button", name))
    button.queryAction().doAction(0)

def fill(dialog, name, value):
    field = wait("field " + name, lambda: find(dialog, "password text", name) or find(dialog, "text", name) or find(dialog, "entry", name))
    field.queryEditableText().setTextContents(value)
    return field

def kh(*arguments):
    return subprocess.run([KH] + list(arguments), capture_output=True, text=True)

def roles(node, depth=0, out=None):
    out = [] if out is None else out
    try:
        out.append("  " * depth + node.getRoleName() + " " + repr(node.name))
        for i in range(node.childCount):
            roles(node.getChildAtIndex(i), depth + 1, out)
    except Exception:
        pass
    return out

def gone(title):
    # True only when every window was read and none has the title: a busy window (a key being
    # derived) does not answer, which is not the same as closed.
    desktop = pyatspi.Registry.getDesktop(0)
    try:
        titles = []
        for i in range(desktop.childCount):
            app = desktop.getChildAtIndex(i)
            for j in range(app.childCount if app is not None else 0):
                titles.append(app.getChildAtIndex(j).name)
        return "Keychain Access" in titles and title not in titles and len(roles(window)) > 10
    except Exception:
        return False

def wait(step, condition, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    fail(step)

def rows(window):
    table = find(window, "tree table", "Items")
    listing = find(table, "list", "GtkColumnListView") if table else None
    return [] if listing is None else [n for n in named(listing, "label")]

window = wait("window", lambda: frame("Keychain Access"))

if os.environ.get("PAGE") == "ssh":
    # The SSH Keys page: a kept key with its last use, the approval its prompt gave, revoked.
    press("SSH Keys", window)
    page = wait("ssh keys window", lambda: frame("SSH Keys"))
    keys = wait("ssh keys list", lambda: find(page, "list", "SSH Keys"))
    line = wait("the kept key", lambda: [l for l in named(keys, "label") if l.startswith("deploy — ecdsa-sha2-nistp256 SHA256:")])[0]
    if "keychain login (made in the keychain, this device only)" not in line or " by ssh-keygen (" not in line or not line.endswith(" to namespace git (prompt)"):
        fail("the key's line: " + line)
    approvals = find(page, "list", "Approvals")
    approval = wait("the approval", lambda: [l for l in named(approvals, "label") if l.startswith("deploy (SHA256:")])[0]
    if ": git signing, until " not in approval:
        fail("the approval's line: " + approval)
    shot("ssh-keys")
    print("ssh keys page", flush=True)
    press("Revoke approval 1", page)
    wait("approval revoked", lambda: not [l for l in named(find(page, "list", "Approvals"), "label") if l.startswith("deploy")])
    if kh("ssh", "approvals").stdout.strip() != "":
        fail("revoked for keyhaven too")
    shot("ssh-keys-revoked")
    print("approval revoked", flush=True)
    press("Close", page)
    sys.exit(0)
for role, name in [("list", "Keychains"), ("list", "Category"), ("entry", "Search"), ("tree table", "Items")]:
    wait("control " + name, lambda: find(window, role, name))
print("controls found", flush=True)
wait("items", lambda: "Mail" in rows(window) and "https://github.com" in rows(window))
shot("items")
print("items shown", flush=True)

search = find(window, "entry", "Search")
search.queryEditableText().setTextContents("imap")
wait("search", lambda: "Mail" in rows(window) and "https://github.com" not in rows(window))
shot("search")
print("search filters", flush=True)
search.queryEditableText().setTextContents("")
wait("search cleared", lambda: "https://github.com" in rows(window))

subprocess.run([KH, "add-generic-password", "-a", "carol", "-s", "added.example.org", "-l", "Added elsewhere", "-w", "x"], check=True)
wait("live add", lambda: "Added elsewhere" in rows(window), seconds=3)
subprocess.run([KH, "delete-generic-password", "-a", "carol", "-s", "added.example.org"], check=True, stdout=subprocess.DEVNULL)
wait("live delete", lambda: "Added elsewhere" not in rows(window), seconds=3)
print("another program's add and delete shown", flush=True)

keychains = find(window, "list", "Keychains")
work = wait("work listed", lambda: find(keychains, "panel", "work, locked"))
keychains.querySelection().selectChild(1)
unlock = wait("unlock button", lambda: find(window, "push button", "Unlock"))
shot("locked")
unlock.queryAction().doAction(0)
dialog = wait("dialog", lambda: frame("Unlock Keychain"))
password = wait("password entry", lambda: find(dialog, "password text", "Password") or find(dialog, "entry", "Password"))
password.queryEditableText().setTextContents("wrong")
find(dialog, "push button", "OK").queryAction().doAction(0)
wait("wrong password said", lambda: "The password is not this keychain's." in named(dialog, "label"))
shot("wrong-password")
print("a wrong password is said", flush=True)
password.queryEditableText().setTextContents("pw")
find(dialog, "push button", "OK").queryAction().doAction(0)
# Steps that derive a password key wait longer: scrypt at 128 MiB or more takes a second or two on a
# slow machine, and a new password runs it twice (calibration, then the key).
wait("unlocked", lambda: find(keychains, "panel", "work, unlocked"), seconds=30)
wait("work items", lambda: "vpn" in rows(window))
shot("unlocked")
print("unlocked with the password", flush=True)
find(window, "push button", "Lock").queryAction().doAction(0)
wait("locked again", lambda: find(keychains, "panel", "work, locked"))
print("locked again", flush=True)

# The keychain commands.
press("New Keychain", window)
dialog = wait("new keychain dialog", lambda: frame("New Keychain"))
fill(dialog, "Keychain Name", "team")
fill(dialog, "Password", "tp")
fill(dialog, "Verify", "tx")
press("Create", dialog)
wait("mismatch said", lambda: "The passwords do not match." in named(dialog, "label"))
fill(dialog, "Password", "tp")
fill(dialog, "Verify", "tp")
press("Create", dialog)
wait("team listed", lambda: find(keychains, "panel", "team, unlocked"), seconds=60)
if "team.keychain-db" not in kh("list-keychains").stdout:
    fail("team in the search list")
print("a new keychain is made", flush=True)

press("Change Settings", window)
dialog = wait("settings dialog", lambda: frame("Keychain Settings"))
def switch(dialog, name):
    found = wait("switch " + name, lambda: find(dialog, "toggle button", name) or find(dialog, "switch", name) or find(dialog, "check box", name))
    found.queryAction().doAction(0)

switch(dialog, "Lock after inactivity")
minutes = wait("minutes", lambda: find(dialog, "spin button", "Minutes of inactivity"))
minutes.queryValue().currentValue = 15
switch(dialog, "Lock when the screen locks or the system sleeps")
shot("keychain-settings")
press("Save", dialog)
wait("settings saved", lambda: "lock-on-sleep timeout=900s" in kh("show-keychain-info", "team").stdout)
print("settings saved", flush=True)

press("Change Password", window)
dialog = wait("password dialog", lambda: frame("Change Keychain Password"))
fill(dialog, "Current Password", "tp")
fill(dialog, "New Password", "tp2")
fill(dialog, "Verify", "tp2")
press("Change", dialog)
wait("password dialog closed", lambda: gone("Change Keychain Password"), seconds=60)
kh("lock-keychain", "team")
opened = kh("unlock-keychain", "-p", "tp2", "team")
if opened.returncode != 0:
    fail("new password opens team")
print("password changed", flush=True)

press("Make Default", window)
wait("team default", lambda: "team.keychain-db" in kh("default-keychain").stdout)
wait("team default shown", lambda: find(keychains, "panel", "team, unlocked, default"))
print("made default", flush=True)

press("Delete Keychain", window)
dialog = wait("delete keychain dialog", lambda: frame("Delete Keychain"))
press("Delete", dialog)
wait("team gone", lambda: find(keychains, "panel", "team, unlocked, default") is None and find(keychains, "panel", "login, unlocked, default"))
print("keychain deleted", flush=True)

# New Password Item, with the strength meter and the generator.
keychains.querySelection().selectChild(0)
press("New Password Item", window)
dialog = wait("new item dialog", lambda: frame("New Password Item"))
fill(dialog, "Item Name", "https://shop.example.com/account")
fill(dialog, "Account Name", "ada")
fill(dialog, "Password", "ab1")
wait("weak said", lambda: any(l.startswith("Weak") for l in named(dialog, "label")))
press("Generate Password", dialog)
wait("strong said", lambda: any(l.startswith("Strong") or l.startswith("Good") for l in named(dialog, "label")))
shot("new-password-item")
press("Add", dialog)
wait("item added", lambda: "https://shop.example.com/account" in rows(window))
generated = kh("find-internet-password", "-s", "shop.example.com", "-a", "ada", "-w").stdout.strip()
if len(generated) < 12:
    fail("generated password stored")
print("a new password item is added with a generated password", flush=True)

# An item's window.
search.queryEditableText().setTextContents("imap")
wait("only mail", lambda: rows(window)[:1] == ["Mail"] and "https://github.com" not in rows(window))
press("Get Info", window)
item = wait("item window", lambda: frame("Mail"))
fill(item, "Comment", "work mail")
press("Save Changes", item)
dialog = wait("save dialog", lambda: frame("Save Changes"))
press("Save", dialog)
wait("comment saved", lambda: '"icmt"<blob>="work mail"' in kh("find-generic-password", "-s", "imap.example.org").stdout)
print("attributes saved", flush=True)
press("Show Password", item)
dialog = wait("show dialog", lambda: frame("Show Password"))
press("Show", dialog)
# GTK 4.8 names a label by its text once the text changes: the shown password is read by name.
wait("password shown", lambda: "secret" in named(item, "label"))
shot("item-attributes")
print("password shown", flush=True)
press("Copy Password", item)
dialog = wait("copy dialog", lambda: frame("Copy Password"))
press("Copy", dialog)
def clip():
    return subprocess.run(["xclip", "-o", "-selection", "clipboard"], capture_output=True, text=True, timeout=5).stdout
wait("clipboard holds it", lambda: clip() == "secret")
wait("clipboard cleared", lambda: clip() == "", seconds=15)
print("password copied and cleared", flush=True)

tabs = wait("tabs", lambda: find_role(item, "page tab list"))
tabs.querySelection().selectChild(1)
press("Add Program", item)
chooser = wait("file chooser", lambda: frame("Choose a Program"))
# The chooser is driven by the keyboard, as a person would: Ctrl+L, the path, Enter.
time.sleep(0.5)
pyatspi.Registry.generateKeyboardEvent(37, None, pyatspi.KEY_PRESS)
pyatspi.Registry.generateKeyboardEvent(46, None, pyatspi.KEY_PRESSRELEASE)
pyatspi.Registry.generateKeyboardEvent(37, None, pyatspi.KEY_RELEASE)
time.sleep(0.5)
pyatspi.Registry.generateKeyboardEvent(0, "/usr/bin/true", pyatspi.KEY_STRING)
time.sleep(0.3)
pyatspi.Registry.generateKeyboardEvent(0xff0d, None, pyatspi.KEY_SYM)
wait("program added", lambda: "/usr/bin/true" in named(item, "label"))
print("program chosen", flush=True)

def click(root, name):
    found = wait("control " + name, lambda: find_any(root, name))
    found.queryAction().doAction(0)

press("Save Access Control", item)
dialog = wait("access dialog", lambda: frame("Save Access Control"))
press("Save", dialog)
wait("program trusted", lambda: '"/usr/bin/true"' in kh("access", "list", "-s", "imap.example.org").stdout)
shot("item-access-control")
click(item, "Allow all programs to access this item")
press("Save Access Control", item)
dialog = wait("access dialog again", lambda: frame("Save Access Control"))
press("Save", dialog)
wait("open to every program", lambda: "access: any application" in kh("access", "list", "-s", "imap.example.org").stdout)
print("access control saved", flush=True)
press("Close", item)
wait("item window closed", lambda: gone("Mail"))

# A certificate with its private key: its details and its export.
search.queryEditableText().setTextContents("")
find(window, "list", "Category").querySelection().selectChild(4)
wait("identity listed", lambda: rows(window)[:1] == ["Window Identity"])
press("Get Info", window)
certificate = wait("certificate window", lambda: frame("Window Identity"))
wait("certificate tabs", lambda: find_role(certificate, "page tab list")).querySelection().selectChild(2)
wait("fingerprint shown", lambda: os.environ["SHA256"] in texts(certificate, "SHA-256 Fingerprint"))
shot("certificate")
press("Export PEM", certificate)
dialog = wait("export dialog", lambda: frame("Export Certificate"))
fill(dialog, "File", FOLDER + "/exported.pem")
press("Export", dialog)
wait("pem written", lambda: os.path.exists(FOLDER + "/exported.pem"))
out = subprocess.run(["openssl", "x509", "-in", FOLDER + "/exported.pem", "-noout", "-fingerprint", "-sha256"], capture_output=True, text=True).stdout
if os.environ["SHA256"].replace(" ", ":") not in out:
    fail("exported PEM")
press("Export PKCS#12", certificate)
dialog = wait("identity export dialog", lambda: frame("Export Identity"))
fill(dialog, "File", FOLDER + "/exported.p12")
fill(dialog, "Passphrase", "pp")
fill(dialog, "Verify Passphrase", "pq")
press("Export", dialog)
wait("mismatch said", lambda: "The passphrases do not match." in named(dialog, "label"))
fill(dialog, "Passphrase", "pp")
fill(dialog, "Verify Passphrase", "pp")
press("Export", dialog)
wait("p12 written", lambda: os.path.exists(FOLDER + "/exported.p12"))
opened = subprocess.run(["openssl", "pkcs12", "-in", FOLDER + "/exported.p12", "-passin", "pass:pp", "-nodes"], capture_output=True, text=True)
if "BEGIN PRIVATE KEY" not in opened.stdout or "BEGIN CERTIFICATE" not in opened.stdout:
    print(opened.stderr, flush=True)
    fail("exported PKCS#12")
print("certificate shown and exported", flush=True)
press("Close", certificate)
wait("certificate window closed", lambda: gone("Window Identity"))

# The keyboard: Ctrl+F searches, Ctrl+C asks then copies, Delete asks then deletes.
find(window, "list", "Category").querySelection().selectChild(0)
def keys(*codes):
    # Keys by X keycode (37 Control, 41 F, 54 C, 36 Return, 119 Delete), pressed in order and
    # released in reverse.
    for code in codes[:-1]:
        pyatspi.Registry.generateKeyboardEvent(code, None, pyatspi.KEY_PRESS)
    pyatspi.Registry.generateKeyboardEvent(codes[-1], None, pyatspi.KEY_PRESSRELEASE)
    for code in reversed(codes[:-1]):
        pyatspi.Registry.generateKeyboardEvent(code, None, pyatspi.KEY_RELEASE)
    time.sleep(0.3)

time.sleep(0.5)
keys(37, 41)
wait("search focused", lambda: search.getState().contains(pyatspi.STATE_FOCUSED))
pyatspi.Registry.generateKeyboardEvent(0, "shop", pyatspi.KEY_STRING)
wait("typed search", lambda: {r for r in rows(window) if r.startswith("https://")} == {"https://shop.example.com/account"})
keys(36)
keys(37, 54)
dialog = wait("copy dialog from the keyboard", lambda: frame("Copy Password"))
press("Copy", dialog)
wait("generated password copied", lambda: clip() == generated)
wait("copy dialog closed", lambda: gone("Copy Password"))
time.sleep(0.5)
keys(119)
dialog = wait("delete dialog", lambda: frame("Delete Item"))
shot("delete-item")
press("Delete", dialog)
wait("item deleted", lambda: "https://shop.example.com/account" not in rows(window))
if kh("find-internet-password", "-s", "shop.example.com").returncode == 0:
    fail("deleted for keyhaven too")
print("keyboard: search, copy, delete", flush=True)
search.queryEditableText().setTextContents("")

press("Sync", window)
sync = wait("sync window", lambda: frame("Sync"))
wait("not syncing said", lambda: any("does not sync" in l for l in named(sync, "label")))
shot("sync")
press("Close", sync)
print("sync page", flush=True)

# The agent gone: the window says so, and reconnects once it is back.
kh("agent", "stop")
runtime = os.environ["XDG_RUNTIME_DIR"] + "/keyhaven"
subprocess.run(["rm", "-rf", runtime])
open(runtime, "w").close()
wait("agent gone said", lambda: any(l.startswith("The keychain agent is not reachable") for l in named(window, "label")))
shot("agent-gone")
os.remove(runtime)
wait("agent back", lambda: not any(l.startswith("The keychain agent is not reachable") for l in named(window, "label")) and "Mail" in rows(window), seconds=20)
print("agent gone said, and reconnected", flush=True)

# The last copy: marked for clipboard managers, and taken back when Keychain Access quits (Ctrl+Q)
# before its 3 s are up, which the clipboard's owner changes, as XFixes reports them, show.
watcher = subprocess.Popen([os.environ["CLIPWATCH"]], stdout=subprocess.PIPE, text=True)
if watcher.stdout.readline().strip() != "watching":
    fail("clipboard watcher")
keys(37, 41)
wait("search focused again", lambda: search.getState().contains(pyatspi.STATE_FOCUSED))
search.queryEditableText().setTextContents("imap")
wait("only mail again", lambda: rows(window)[:1] == ["Mail"])
keys(36)
keys(37, 54)
dialog = wait("copy dialog before quitting", lambda: frame("Copy Password"))
press("Copy", dialog)
wait("copied before quitting", lambda: clip() == "secret", seconds=2)
targets = subprocess.run(["xclip", "-o", "-selection", "clipboard", "-t", "TARGETS"], capture_output=True, text=True, timeout=5).stdout.split()
if "x-kde-passwordManagerHint" not in targets or "UTF8_STRING" not in targets:
    fail("the clipboard's targets: %s" % targets)
keys(37, 24)
wait("Keychain Access quit", lambda: subprocess.run(["pgrep", "-x", "keyhaven-access"], capture_output=True).returncode != 0)
time.sleep(0.5)
watcher.kill()
changes = watcher.communicate()[0].split()
last = len(changes) - 1 - changes[::-1].index("owner") if "owner" in changes else -1
if last < 0 or changes[last + 1:last + 2] != ["cleared"]:
    fail("the clipboard's owner changes: %s" % changes)
if clip() != "":
    fail("the clipboard still holds the password")
print("the copy is marked for clipboard managers, and cleared on quit", flush=True)
