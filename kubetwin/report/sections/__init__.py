"""The HTML report's sections, one module each; :func:`kubetwin.report.html.render_html`
composes them in order.

Not an upstream module: kubetwin's own report.
"""
