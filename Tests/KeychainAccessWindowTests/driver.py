# Drives Keychain Access through AT-SPI, as a screen reader or a test robot would: every control
# is found by its accessible name. Prints one line per step; exits 1 on the first failure.
import os, subprocess, sys, time
import pyatspi

SHOTS = os.environ["SHOTS"]
KH = os.environ["KH"]

def shot(name):
    subprocess.run(["/usr/bin/import", "-window", "root", os.path.join(SHOTS, name + ".png")], check=False)

def fail(step):
    shot("failed-" + step)
    print("FAILED " + step, flush=True)
    sys.exit(1)

def find(node, role, name):
    try:
        if node.getRoleName() == role and node.name == name:
            return node
        for i in range(node.childCount):
            found = find(node.getChildAtIndex(i), role, name)
            if found is not None:
                return found
    except Exception:
        pass
    return None

def named(node, role):
    out = []
    try:
        if node.getRoleName() == role:
            out.append(node.name)
        for i in range(node.childCount):
            out += named(node.getChildAtIndex(i), role)
    except Exception:
        pass
    return out

def frame(title):
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        found = find(app, "frame", title) if app is not None else None
        if found is not None:
            return found
    return None

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
wait("unlocked", lambda: find(keychains, "panel", "work, unlocked"))
wait("work items", lambda: "vpn" in rows(window))
shot("unlocked")
print("unlocked with the password", flush=True)
find(window, "push button", "Lock").queryAction().doAction(0)
wait("locked again", lambda: find(keychains, "panel", "work, locked"))
print("locked again", flush=True)
