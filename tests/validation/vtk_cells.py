"""The cell arrays of a run's VTK image, for the validation scripts (imported, not run)."""
import os

from vtkmodules.vtkIOXML import vtkXMLImageDataReader


def cell_tuples(folder, step):
    """fields_<step>.vti of folder: each cell array by name, a tuple per cell (x fastest)."""
    r = vtkXMLImageDataReader()
    r.SetFileName(os.path.join(folder, "fields_%06d.vti" % step))
    r.Update()
    cd = r.GetOutput().GetCellData()
    out = {}
    for i in range(cd.GetNumberOfArrays()):
        a = cd.GetArray(i)
        out[cd.GetArrayName(i)] = [a.GetTuple(k) for k in range(a.GetNumberOfTuples())]
    return out


def first_difference(got, others, step, names):
    """The first (folder, array name) among others whose fields_<step>.vti differs from got
    (cell_tuples of one folder) in one of names, bit for bit; None where all agree."""
    for other in others:
        theirs = cell_tuples(other, step)
        for name in names:
            if theirs[name] != got[name]:
                return other, name
    return None
