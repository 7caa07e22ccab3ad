"""PrintV2: ``tf.print`` as an op, so a traced program prints when it runs, in program order.

It has no outputs and is not pure: no pass may drop, merge, fold or move it. ``template``
is the whole line with one ``str.format`` field per tensor input (the Python values of the
call are already in it), ``stream`` is "stderr" or "stdout".
"""
from ...errors import InferError
from ..opdef import defop


def _print(avals, template, summarize, stream):
    if stream not in ("stderr", "stdout"):
        raise InferError(f"output_stream must be sys.stderr or sys.stdout, got {stream!r}")
    return ()


defop("PrintV2", _print, arity=None, multi_output=True, pure=False,
      attrs={"template": "str", "summarize": "int", "stream": "str"})
