package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
)

// chooseOpenFile shows a file-open dialog limited to the given extensions
// and calls open with the chosen file's path. Dismissing it does nothing.
func chooseOpenFile(w fyne.Window, exts []string, open func(path string)) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			showError(w, err)
			return
		}
		r.Close()
		open(r.URI().Path())
	}, w)
	d.SetFilter(storage.NewExtensionFileFilter(exts))
	d.Show()
}

// chooseSaveFile shows a file-save dialog proposing name and calls save with
// the chosen path. The dialog creates an empty file there; it is removed
// before save runs, because Clinsight's exporters write a temporary file and
// rename it over the path only on success, so an error or Cancel leaves
// nothing behind.
func chooseSaveFile(w fyne.Window, name string, save func(path string)) {
	saveFileDialog(w, name, save, nil).Show()
}

// saveFileDialog is chooseSaveFile's dialog, not shown yet; dismissed
// (Cancel, or the dialog failed, which it shows), it calls cancelled when
// not nil.
func saveFileDialog(w fyne.Window, name string, save func(path string), cancelled func()) *dialog.FileDialog {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			showError(w, err)
			if cancelled != nil {
				cancelled()
			}
			return
		}
		uri := wc.URI()
		wc.Close()
		if err := storage.Delete(uri); err != nil {
			showError(w, err)
			return
		}
		save(uri.Path())
	}, w)
	d.SetFileName(name)
	return d
}
