# Bytes a terminal acts on and marks that reorder text, in an exception's class name and its message
# and in what the code prints: a report or terminal showing them raw would be recoloured, retitled
# or reordered by a student.
print("\x1b]0;owned\x07\x1b[2J\x1b[31mred\u202eevil\r\nnext line")
Weird = type("Err\x1b[31m\u202eor\r\nX", (Exception,), {})
raise Weird("\x1b[31mred\u202e\u2066text\r\nsecond line\x00")
