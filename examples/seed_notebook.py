# The seed's question and answer (shared/seed), run on onefit: the code as posted, with the
# TPU set-up lines (and `with strategy.scope():`) removed and the TensorFlow imports replaced by
# onefit's. Its first program (arrays, steps_per_epoch=2), then the answer's tf.data program and
# its repeat(20) variant. python/tests/test_seed_notebook.py runs it.
import timeit
import os
import onefit as tf
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split
from onefit.keras.models import Sequential
from onefit.keras.layers import Dense
from onefit.keras.optimizers import Adam

# Load Iris dataset
x = load_iris().data
y = load_iris().target

# Split data to train and validation set
x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.30, shuffle=False)

# Convert train data type to use TPU
x_train = x_train.astype('float32')
x_val = x_val.astype('float32')

# Use the strategy to create and compile a Keras model
model = Sequential()
model.add(Dense(32, input_shape=(4,), activation=tf.nn.relu, name="relu"))
model.add(Dense(3, activation=tf.nn.softmax, name="softmax"))
model.compile(optimizer=Adam(learning_rate=0.1), loss='logcosh')

start = timeit.default_timer()

# Fit the Keras model on the dataset
model.fit(x_train, y_train, batch_size=20, epochs=20, validation_data=[x_val, y_val], verbose=0, steps_per_epoch=2)

print('\nTime: ', timeit.default_timer() - start)

# The answer: tf.data datasets.
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(20)
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(20)

# Use the strategy to create and compile a Keras model
model = Sequential()
model.add(Dense(32, input_shape=(4,), activation=tf.nn.relu, name="relu"))
model.add(Dense(3, activation=tf.nn.softmax, name="softmax"))
model.compile(optimizer=Adam(learning_rate=0.1), loss='logcosh')

start = timeit.default_timer()

# Fit the Keras model on the dataset
model.fit(train_dataset, epochs=20, validation_data=val_dataset)

print('\nTime: ', timeit.default_timer() - start)

# "By repeating the dataset and running one long epoch instead of several small ones":
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).repeat(20).batch(20)
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(20)

model = Sequential()
model.add(Dense(32, input_shape=(4,), activation=tf.nn.relu, name="relu"))
model.add(Dense(3, activation=tf.nn.softmax, name="softmax"))
model.compile(optimizer=Adam(learning_rate=0.1), loss='logcosh')

start = timeit.default_timer()

model.fit(train_dataset, validation_data=val_dataset)

print('\nTime: ', timeit.default_timer() - start)
