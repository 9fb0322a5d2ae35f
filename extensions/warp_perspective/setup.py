"""The slides' ahead-of-time build: ``python setup.py build_ext --inplace`` makes ``extension.<abi>.so`` here.

As the slides' setup.py, with toolkit's ``BuildExtension``/``CppExtension`` and OpenCV's flags (pkg-config
opencv4). Then ``import extension; extension.compute(image, warp)``. Two changes from the slides, which
torch's route needs as much: ``sources`` is a list (setuptools refuses a bare string), and there is no
``packages=['extension']`` (there is no Python package of that name to install, only the module).
"""

import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opencv_flags import opencv_flags  # noqa: E402 - beside this file

from toolkit.utils.cpp_extension import BuildExtension, CppExtension  # noqa: E402

includes, library_dirs, libraries = opencv_flags()

setup(
    name='extension',
    ext_modules=[CppExtension(
        name='extension',
        sources=['extension.cpp'],
        include_dirs=includes,
        library_dirs=library_dirs,
        libraries=libraries,
        extra_compile_args=['-O2'],
    )],
    cmdclass=dict(build_ext=BuildExtension))
