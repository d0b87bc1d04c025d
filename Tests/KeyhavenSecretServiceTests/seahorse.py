# Drives Seahorse (GNOME's Passwords and Keys) through AT-SPI, by the accessible names a screen
# reader reads: the login collection, unlocked through Keyhaven's prompt, its item listed, then
# its properties, attributes and (masked) secret shown. Prints one line per step; exits 1 at the first
# step that does not come.
import os, subprocess, sys, time
import pyatspi

SECRET = os.environ["SECRET"]
SHOTS = os.environ["SHOTS"]

def first(node, matches):
    # pyatspi's own search; a node that vanishes mid-search counts as not found.
    try:
        return pyatspi.utils.findDescendant(node, matches) if not matches(node) else node
    except Exception:
        return None

def seahorse():
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None and app.name == "seahorse":
            return app
    return None

def wait(what, step, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        app = seahorse()
        found = first(app, what) if app is not None else None
        if found is not None:
            print(step, flush=True)
            return found
        time.sleep(0.2)
    print("FAILED " + step, flush=True)
    subprocess.run(["/usr/bin/import", "-window", "root", os.path.join(SHOTS, "seahorse-failed.png")], check=False)
    sys.exit(1)

def label(text):
    return lambda n: n.getRoleName() == "label" and (n.name or "").startswith(text)

def row_with(text):
    return lambda n: n.getRoleName() == "list item" and first(n, label(text)) is not None

def click(node, kind="b1c"):
    box = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    pyatspi.Registry.generateMouseEvent(box.x + box.width // 2, box.y + box.height // 2, kind)

login = wait(row_with("login"), "collection listed")
login.parent.querySelection().selectChild(login.getIndexInParent())
# The sidebar's button beside a locked collection unlocks it: Keyhaven's prompt asks for the password.
first(login, lambda n: n.getRoleName() == "push button").queryAction().doAction(0)
row = wait(row_with("Seahorse item"), "item listed after unlocking")
click(row, "b1d")
dialog = wait(lambda n: n.getRoleName() == "dialog" and n.name == "Item Properties", "properties shown")
wait(lambda n: n.getRoleName() == "label" and n.name == "shsvc", "attributes shown")
# The password field fills with the secret once Keyhaven lets Seahorse read it (the scripted
# pinentry allows it). It is masked, and so is its accessible text: one mask character per
# character of the secret.
field = wait(lambda n: n.getRoleName() == "password text" and len(n.queryText().getText(0, -1)) == len(SECRET), "secret loaded", 10)
subprocess.run(["/usr/bin/import", "-window", "root", os.path.join(SHOTS, "seahorse.png")], check=False)
